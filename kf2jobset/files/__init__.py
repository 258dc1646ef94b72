"""A file's text in and its new text out: the documents spliced back (`pipeline`), where a document's parts
went (`output_paths`), a kustomize ResourceList (`krm`)."""
