"""One job through the pipeline, dicts in and dicts out: parse, plan, emit (with addresses, env merging and
selectors), the entry for one job (`convert`) and for any document (`document_routing`). Pure."""
