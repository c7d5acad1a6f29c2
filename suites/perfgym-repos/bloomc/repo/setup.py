from setuptools import Extension, setup

setup(
    name="bloomc",
    version="0.4.0",
    packages=["bloomc"],
    ext_modules=[Extension("bloomc._core", ["bloomc/_core.c"], extra_compile_args=["-O2"])],
)
