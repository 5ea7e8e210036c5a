"""Notifications: governance violations opened and resolved, failed checks and stale feeds,
delivered to webhooks, Slack and mail once per target (`lakehouse notify`).

One module per job: `settings` (the configured targets), `notices` (what is worth saying),
`changes` (reading only what changed since the last run), `open_conditions` (what was said to
be open, and the run's watermark), `delivery_log` (`ops.notification_deliveries`), `messages`
(notices grouped into one message per owner or channel), `formatting` (a message per target
type), `secrets`, `senders` (HTTP and SMTP), `retry` and `run` (one notify run).
"""
