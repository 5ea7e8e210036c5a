"""Evidence packs: the changes of one scope, the raw records behind them and what produced them,
as a folder of files anyone can check without the warehouse (`lakehouse evidence`).

Why: an auditor asks "who changed what, between these dates, and show me the original event".
A pack answers once and keeps answering: it names the Delta version of every table it read, so
the same scope built again from those versions gives the same bytes, and its manifest lets
`lakehouse evidence verify` tell whether any file was altered, removed or added since.
"""
