"""AIR files: a graph as GE's own graph protobuf (``ge.proto.ModelDef``), what GE's ``Graph::SaveToFile`` writes
and ``Graph::LoadFromFile`` reads. :mod:`.schema` holds the message classes, :mod:`.codec` the mapping between
them and the engine's :class:`~openacl.graph_engine.graph.Graph`."""
