-- Without a terminal, confirm() fails clearly; nothing that depends on it runs.
-- args: -k @
-- exit: 1
-- stderr: FAILED    deploy (
-- stderr: ): condition 'confirm' failed: cannot ask "Deploy to production?": not running on a terminal (--yes answers yes)
-- stdout: skipped   announce: dependency 'deploy' failed
operation { name = "deploy", conditions = { confirm "Deploy to production?" }, sh = "true" }
operation { name = "announce", after = { "deploy" }, sh = "true" }
