from tests.pipelines.toy_graph import job, meet, typed


def _transform(bronze):
    meet(bronze)
    return typed(bronze)


JOB = job("meets_then_succeeds", _transform)
