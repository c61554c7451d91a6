"""Tests of the claudecode client against fake and scripted CLIs."""
