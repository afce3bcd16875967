"""Tests of the dbbench package."""
