"""Analytic models used to validate the simulator and to reproduce the theses."""
