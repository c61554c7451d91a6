"""Tests of the adapter core: sessions, backends, policies, commands."""
