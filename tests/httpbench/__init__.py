"""Tests of the httpbench package."""
