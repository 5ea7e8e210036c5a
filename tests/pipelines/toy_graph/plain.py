from tests.pipelines.toy_graph import job, typed

JOB = job("plain", typed)
