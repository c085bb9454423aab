"""ipctop: watch IPC scale, or fail to scale, as CPUs are added."""

__version__ = "0.1.0"
