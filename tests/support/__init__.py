"""Helpers several test folders share."""
