"""The lowerings of the op table, one file per family; ``openacl.op.table`` registers their records."""
