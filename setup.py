"""Build the native hot loops; install still succeeds without a compiler.

Without the extension ipctop falls back to its pure-Python engine and says so
in every output.
"""

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LAUNCHER = "ipctop/native/launcher/hackbench_tasks.c"


class OptionalBuildExt(build_ext):
    def run(self) -> None:
        try:
            super().run()
            self._build_launcher()
        except Exception as exc:  # noqa: BLE001 - any build failure means "no native engine"
            self._warn(exc)

    def _build_launcher(self) -> None:
        """hackbench's process-mode launcher: a small executable beside the
        extension (its tasks must not be forked from the Python process)."""
        where = Path(self.get_ext_fullpath("ipctop._native")).parent
        objects = self.compiler.compile(
            [LAUNCHER], output_dir=self.build_temp, extra_postargs=["-O2", "-Wall", "-std=gnu11"]
        )
        self.compiler.link_executable(
            objects, "_hackbench_tasks", output_dir=str(where), libraries=["pthread"]
        )

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._warn(exc)

    @staticmethod
    def _warn(exc: Exception) -> None:
        print(
            f"ipctop: native engine not built ({exc}); the pure-Python engine will be used",
            file=sys.stderr,
        )


native = Extension(
    "ipctop._native",
    # Every C file of the directory: a new loops_*.c needs no edit here.
    sources=sorted(str(p) for p in Path("ipctop/native").glob("*.c")),
    depends=[str(p) for p in Path("ipctop/native").glob("*.h")],
    extra_compile_args=["-O2", "-Wall", "-std=gnu11"],
    libraries=["rt", "pthread"],
)

setup(ext_modules=[native], cmdclass={"build_ext": OptionalBuildExt})
