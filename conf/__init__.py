"""The default configuration and the event catalogs, installed as the package `pipelines.conf`.

pyproject.toml maps this folder to that package so that the wheel carries its YAML files;
pipelines/core/defaults.py reads them with importlib.resources.
"""
