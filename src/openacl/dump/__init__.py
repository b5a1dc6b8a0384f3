"""Everything about dumps: the CANN dump file format, its parser, the dump config and where dumps go."""
