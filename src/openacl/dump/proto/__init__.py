"""``dump_data.proto`` (package ``toolkit.dumpdata``) and its generated module (scripts/gen_dump_proto.sh)."""
