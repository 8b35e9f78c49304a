"""Tests of `loralay_build.run`."""
