"""Tests of the verdict package."""
