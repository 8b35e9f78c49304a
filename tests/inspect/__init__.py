"""Tests of `loralay_build.inspect`."""
