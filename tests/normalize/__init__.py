"""Tests of the normalize package's tool-payload normalisers."""
