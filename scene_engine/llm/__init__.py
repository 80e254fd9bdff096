"""llm: talking to a model through litellm, for any task (docs/DESIGN.md "A batch", step 4).

``loop`` (the tool loop: a model works through tools until it answers in text, with budgets
and retries), ``text_calls`` (tool calls a model wrote as plain text), ``preflight`` (set-up
checks made before litellm is imported) and ``prompts`` (the templates in ``prompts/``).

May import: ``core``. Knows nothing of scenes or stores: the batch and the extractor give it
messages and tools.
"""
