from tests.support.toy_graph import meet, spec


def _transform(bronze):
    meet(bronze)
    raise RuntimeError("toy failure after the rendezvous")


SPEC = spec("meets_then_fails", _transform)
