"""The expectation suites, installed as the package `pipelines.expectations`.

pyproject.toml maps this folder to that package so that the wheel carries its JSON files;
pipelines/core/defaults.py reads them with importlib.resources.
"""
