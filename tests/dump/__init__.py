"""Tests of openacl.dump."""
