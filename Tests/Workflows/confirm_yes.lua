-- --yes answers every confirm().
-- args: --yes @
-- exit: 0
-- stdout: ok        deploy
operation { name = "deploy", conditions = { confirm "Deploy to production?" }, sh = "true" }
