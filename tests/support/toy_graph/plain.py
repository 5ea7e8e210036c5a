from tests.support.toy_graph import spec, typed

SPEC = spec("plain", typed)
