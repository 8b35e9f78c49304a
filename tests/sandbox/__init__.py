"""Tests of `loralay_build.sandbox`."""
