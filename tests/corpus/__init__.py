"""Tests of `loralay_build.corpus`."""
