"""The attribute kinds an operator declares (``aclopAttr`` setters: ``set_attr_int`` sets an ``int``)."""

BOOL, INT, FLOAT, STRING, DATA_TYPE = "bool", "int", "float", "string", "data_type"
LIST_BOOL, LIST_INT, LIST_FLOAT, LIST_STRING = "list_bool", "list_int", "list_float", "list_string"
LIST_LIST_INT, LIST_DATA_TYPE = "list_list_int", "list_data_type"
KINDS = (BOOL, INT, FLOAT, STRING, DATA_TYPE)
KINDS += (LIST_BOOL, LIST_INT, LIST_FLOAT, LIST_STRING, LIST_LIST_INT, LIST_DATA_TYPE)
