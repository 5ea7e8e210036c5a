from tests.pipelines.toy_graph import job, meet


def _transform(bronze):
    meet(bronze)
    raise RuntimeError("toy failure after the rendezvous")


JOB = job("meets_then_fails", _transform)
