"""``dump_data.proto`` (package ``toolkit.dumpdata``), its descriptor and its classes in a private pool."""
