-- A misspelt field names the valid ones; the error points at the declaration's line.
-- exit: 2
-- stderr: taskrun: bad_field.lua:6: operation 'build': unknown field 'depends'
-- stderr: (valid fields: name, run, sh, env, cwd, progress, after, queue, priority, when, conditions, timeout, observers, retries, retry, weight, desc, sandbox, cleanup, cleanup_grace, qos, inputs, outputs, depfile, key, fresh, service, ready, interactive)
operation { name = "fetch", sh = "true" }
operation { name = "build", depends = { "fetch" }, sh = "true" }
