from tests.support.toy_graph import meet, spec, typed


def _transform(bronze):
    meet(bronze)
    return typed(bronze)


SPEC = spec("meets_too", _transform)
