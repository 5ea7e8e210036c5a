from tests.pipelines.toy_graph import spec, typed

SPEC = spec("plain", typed)
