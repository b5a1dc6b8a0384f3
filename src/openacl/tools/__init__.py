"""Tools on dumps, above the facade: a golden dump of one execution, dump files to .npy, two dumps compared."""
