"""``ge._capi``: GE-PY's ctypes layer over its C libraries. openacl runs no C library, so its modules here only
answer the questions programs ask about those libraries (is one loaded?), truthfully: no."""
