-- A command that cannot start says why: a missing program, a missing directory.
-- args: -k @
-- exit: 1
-- stderr: FAILED    missing (
-- stderr: ): could not start (nosuchprogram: command not found): nosuchprogram --version
-- stderr: FAILED    nowhere (
-- stderr: ): could not start (cwd '/no/such/dir': no such directory): echo hi && true
operation { name = "missing", sh = { "nosuchprogram", "--version" } }
operation { name = "nowhere", cwd = "/no/such/dir", sh = "echo hi && true" }
