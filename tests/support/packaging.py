"""What a wheel is built from: the files and folders of the repository that go into it."""

BUILD_INPUTS = (
    "pyproject.toml",
    "README.md",
    "pipelines",
    "bronze",
    "silver",
    "gold",
    "conf",
    "expectations",
)
