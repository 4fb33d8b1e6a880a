---@meta taskrun
-- taskrun.lua: type definitions of the taskrun API for lua-language-server (LuaLS), so that
-- editors complete and check workflow scripts. Installed by scripts/install; point LuaLS
-- at it with `"workspace.library": ["<prefix>/share/taskrun/types"]` in .luarc.json.
-- LuaHostTests keeps it in sync with the host: every name the host defines, and nothing more.

---An operation: a Lua function or a shell command, with its dependencies and conditions.
---@class taskrun.Operation
---@field name string The operation's name (unique in the run).
---@field state "pending"|"ready"|"executing"|"finished"
---@field cancelled boolean
---@field failed boolean
---@field skipped boolean
---@field succeeded boolean
---@field outcome "succeeded"|"failed"|"cancelled"|"skipped"|"up_to_date"|"resumed"|nil up_to_date and resumed: it did not run (the run store); its dependents count it as succeeded
---@field error string|nil Why it failed, was skipped or cancelled.
---@field error_kind "command"|"script"|"condition"|"dependency"|"child"|"timeout"|"cancelled"|"interrupted"|nil
---@field traceback string|nil The Lua traceback of a failed body (your frames).
---@field result any What the body returned, or `{ status, stdout, stderr }` for a command.
---@field duration number|nil Seconds it ran (its last attempt).
---@field attempt integer Attempts so far.
---@field priority "very_low"|"low"|"normal"|"high"|"very_high" Settable until it starts (a name, or Foundation's number -8…8, snapped to the nearest level).
---@field qos "user_interactive"|"user_initiated"|"utility"|"background"|nil Its commands' CPU and I/O niceness.
---@field interactive boolean It runs alone, its commands with the terminal (`interactive = true`).
---@field when "succeeded"|"finished"|"failed"
---@field weight number Its share of the run's progress.
---@field desc string|nil What it is for (`taskrun --list`).
---@field sandbox {network: boolean, read: string[], write: string[]}|nil What its commands may do beyond reading the system under `--sandbox` (nil: commands are not confined).
---@field timeout number|nil Seconds each attempt may take.
---@field activities string[] Its activity indicators.
---@field queue taskrun.Queue
---@field group taskrun.Operation|nil The group it runs in.
---@field children taskrun.Operation[] A group's operations.
---@field progress taskrun.Progress Its own progress (total 1 until the body sets it).
---@field dependencies taskrun.Operation[]
local Operation = {}

---Adds dependencies (operations or names) before it starts.
---@param ... taskrun.Operation|string
---@return taskrun.Operation
function Operation:after(...) end

---Removes a dependency before it starts.
---@param dependency taskrun.Operation
function Operation:remove_dependency(dependency) end

---Cancels it (a running body is stopped, a command gets TERM then KILL).
---@param reason? string
function Operation:cancel(reason) end

---Adds operations to a group (while it has not finished).
---@param ... taskrun.Operation
function Operation:add(...) end

---Adds a condition before it starts.
---@param condition taskrun.Condition
function Operation:add_condition(condition) end

---Adds an observer before it starts.
---@param observer taskrun.Observer
function Operation:add_observer(observer) end

---A sentence: what it waits for, or how it ended.
---@return string
function Operation:why() end

---Waits until it finished; returns its result, raises if it did not succeed.
---@return any
function Operation:wait() end

---A queue: operations on it run at most `max_concurrent` at once.
---@class taskrun.Queue
---@field name string
---@field max_concurrent integer -1 for unlimited; settable.
---@field suspended boolean Settable: a suspended queue starts nothing.
---@field count integer Its unfinished operations.
---@field running integer Its executing operations.
---@field operations taskrun.Operation[] Those that have not finished (as Foundation's).
---@field all_operations taskrun.Operation[] Every operation ever put on it, in declaration order.
local Queue = {}

---Starts nothing new until `resume`.
function Queue:suspend() end

---Starts its ready operations again.
function Queue:resume() end

---Cancels every unfinished operation on it.
---@param reason? string
function Queue:cancel_all(reason) end

---Waits until every operation on it finished.
function Queue:wait() end

---A progress node (NSProgress semantics).
---@class taskrun.Progress
---@field total integer -1: indeterminate; changing it rescales.
---@field completed integer
---@field kind "file"|nil
---@field description string
---@field additional_description string
---@field cancellable boolean
---@field pausable boolean
---@field throughput number|nil Bytes a second (kind "file"), estimated unless set.
---@field eta number|nil Seconds left, estimated unless set.
---@field file_operation "downloading"|"decompressing"|"receiving"|"copying"|nil
---@field file_url string|nil
---@field file_total_count integer|nil
---@field file_completed_count integer|nil
---@field on_cancel fun(p: taskrun.Progress)|nil
---@field on_pause fun(p: taskrun.Progress)|nil
---@field on_resume fun(p: taskrun.Progress)|nil
---@field user_info table<string, string|number|boolean> Foundation's userInfo: a copy when read; assigning replaces it; in the progress events.
---@field fraction number Read-only: (completed + children's shares) / total.
---@field indeterminate boolean Read-only.
---@field finished boolean Read-only.
---@field cancelled boolean Read-only.
---@field paused boolean Read-only.
---@field parent taskrun.Progress|nil Read-only.
local Progress = {}

---Explicit composition: `child` is worth `pending` of this node's units.
---@param child taskrun.Progress
---@param pending integer
function Progress:add_child(child, pending) end

---Implicit composition: the next progress{} made in this coroutine becomes a child worth `pending`.
---@param pending integer
function Progress:become_current(pending) end

---Ends `become_current`.
function Progress:resign_current() end

---Cancels this node and its descendants (permanent).
function Progress:cancel() end

---Pauses this node and its descendants.
function Progress:pause() end

---Resumes this node and its descendants.
function Progress:resume() end

---Calls `fn(p)` after changes, at most 15 times a second (`every`: at each change; `keys`: only
---when one of those fields changed; `initial`: once at once). Returns the observation.
---@param fn fun(p: taskrun.Progress)
---@param options? { initial?: boolean, keys?: string[], every?: boolean }
---@return taskrun.Observation
function Progress:observe(fn, options) end

---Ends an observation `observe` returned.
---@param observation taskrun.Observation
function Progress:unobserve(observation) end

---Sets one key of `user_info` (nil removes it), as `setUserInfoObject(_:forKey:)`.
---@param key string
---@param value string|number|boolean|nil
function Progress:set_user_info(key, value) end

---What `p:observe` returns.
---@class taskrun.Observation
---@field active boolean False once cancelled.
---@field every boolean Told every change.
---@field keys string[]|nil The fields it watches (nil: any change).
---@field progress taskrun.Progress The progress it observes.
local Observation = {}

---Ends it: its function is not called again.
function Observation:cancel() end

---A condition: what must hold just before an operation starts.
---@class taskrun.Condition

---An observer: told when an operation starts, finishes or produces another.
---@class taskrun.Observer

---The fields of operation{}.
---@class taskrun.OperationSpec
---@field name? string Default: a generated name.
---@field run? fun(op: taskrun.Operation): any The body (runs as a coroutine).
---@field sh? string|string[] A command: a string for the shell, a list for exec.
---@field env? table<string, string> Environment of `sh`.
---@field cwd? string Working directory of `sh`.
---@field progress? string A Lua pattern whose captures in the command's output are its progress.
---@field after? (taskrun.Operation|string)[] Dependencies.
---@field queue? taskrun.Queue
---@field priority? "very_low"|"low"|"normal"|"high"|"very_high"|integer A name, or Foundation's number -8…8 (snapped to the nearest level).
---@field when? "succeeded"|"finished"|"failed" Which dependency outcomes let it run.
---@field conditions? taskrun.Condition[]
---@field timeout? number Seconds each attempt may take.
---@field observers? taskrun.Observer[]
---@field retries? integer
---@field retry? { max: integer, delay?: number, backoff?: "constant"|"exponential" }
---@field weight? number Its share of the run's progress (default 1).
---@field desc? string What it is for (`taskrun --list`).
---@field sandbox? {read?: string|string[], write?: string|string[], network?: boolean} What its commands may do beyond `--sandbox`'s defaults (honoured as `--sandbox-allow` says).
---@field cleanup? fun(op: taskrun.Operation, why: "failed"|"cancelled"|"timeout"|"interrupted", message: string) Runs after the body stopped for a failure, a cancel or a timeout; may call sh.
---@field cleanup_grace? number Seconds the cleanup may take (default 10); then, or at a second Ctrl-C, it is stopped.
---@field qos? "user_interactive"|"user_initiated"|"utility"|"background" Its commands' CPU and I/O niceness (GCD's quality of service).
---@field interactive? boolean Its commands get the terminal (stdin, stdout, stderr, the foreground; else taskrun's stdin) and it runs alone: it starts when nothing else runs, nothing starts until it ends, and a live view steps aside meanwhile.
---@field inputs? string|string[] Files and globs (`*`, `?`, `[…]`, `**`) it reads: their contents are part of its fingerprint (the run store).
---@field outputs? string|string[] Files, globs and folders it makes: hashed after it succeeds (unchanged ones stop the rebuild), removed when it fails, required to exist.
---@field depfile? string A Makefile-style dependency file its command writes (`gcc -MD`): what it names are inputs of the next run.
---@field key? any Values that must make it run again when they change (nil, booleans, numbers, strings and tables of them).
---@field fresh? fun(op: taskrun.Operation): boolean Returns true when it is up to date (alone, or with inputs/outputs: both must agree).
---@field service? boolean A long-running command (needs `sh`): it succeeds once `ready` holds and stays up while its dependents run (across the cycles of `taskrun -w`).
---@field ready? taskrun.Condition With `service`: what must hold before its dependents start (`reachable("127.0.0.1", 8080)`).

---Declares an operation.
---@param spec taskrun.OperationSpec
---@return taskrun.Operation
function operation(spec) end

---Declares a group: the operations listed in it run inside it.
---@param spec taskrun.OperationSpec|taskrun.Operation[]
---@return taskrun.Operation
function group(spec) end

---Declares a queue.
---@param spec { name?: string, max_concurrent?: integer, suspended?: boolean, executor?: "local"|"slurm", slurm?: { partition?: string, account?: string, cpus?: integer, mem?: string, time?: string|integer, extra?: string[] } }
---@return taskrun.Queue
function queue(spec) end

---The queue operations run on unless they name another (-j limits it).
---@type taskrun.Queue
main_queue = nil

---Runs a command and waits for it (yields; in a body or at the top level).
---@param command string|string[]
---@param options? { env?: table<string, string>, cwd?: string, check?: boolean }
---@return { status: integer, stdout: string, stderr: string, stdout_file?: string, stderr_file?: string }
function sh(command, options) end

---Asks `question` on the terminal with numbered `choices` (one question at a time, like
---confirm) and returns the choice; away from a terminal `--answer` or the default answers
---it, with a note saying so (yields; in a body or at the top level).
---@param question string
---@param choices string[] 1 to 20 names.
---@param options? { default?: string }
---@return string
function choose(question, choices, options) end

---Waits `seconds` (yields).
---@param seconds number
function sleep(seconds) end

---Waits until the operations finished; raises if one did not succeed.
---@param ... taskrun.Operation
function wait(...) end

---Runs the operations (all declared ones when none given) and their dependencies, and waits.
---@param ... taskrun.Operation
---@return boolean ok
---@return string|nil failures
function run(...) end

---Whether the running body (or the run) was cancelled.
---@return boolean
function cancelled() end

---A condition from Lua: `evaluate(op)` returns true, false/nil with a message, or a condition.
---@param spec { name?: string, evaluate: fun(op: taskrun.Operation): (boolean|taskrun.Condition|nil), string?, dependency?: fun(op: taskrun.Operation): taskrun.Operation? }
---@return taskrun.Condition
function condition(spec) end

---Mutual exclusion: one operation holding `name` at a time.
---@param name string
---@return taskrun.Condition
function mutex(name) end

---At most `n` operations holding `name` at a time.
---@param name string
---@param n integer
---@return taskrun.Condition
function resource(name, n) end

---Satisfied when the path exists.
---@param path string
---@return taskrun.Condition
function exists(path) end

---Satisfied when a TCP connection to host:port succeeds within `timeout` seconds.
---@param host string
---@param port integer
---@param timeout? number
---@return taskrun.Condition
function reachable(host, port, timeout) end

---Asks on the terminal (yes/no); --yes answers yes.
---@param prompt string
---@return taskrun.Condition
function confirm(prompt) end

---Asks on the terminal before the operation starts, one question at a time; away from a
---terminal `--answer` or the default answers it. A choice listed in `skip` skips the
---operation, one in `fail` fails it, any other lets it run.
---@param question string
---@param choices string[] 1 to 20 names.
---@param options? { default?: string, skip?: string|string[], fail?: string|string[] }
---@return taskrun.Condition
function choice(question, choices, options) end

---Satisfied when `c` is not.
---@param c taskrun.Condition
---@return taskrun.Condition
function negate(c) end

---`c` without its dependency.
---@param c taskrun.Condition
---@return taskrun.Condition
function silent(c) end

---Satisfied when every condition is.
---@param ... taskrun.Condition
---@return taskrun.Condition
function all(...) end

---Satisfied when one of the conditions is.
---@param ... taskrun.Condition
---@return taskrun.Condition
function any(...) end

---An observer from Lua functions.
---@param spec { on_start?: fun(op: taskrun.Operation), on_finish?: fun(op: taskrun.Operation, err: string|nil), on_produce?: fun(op: taskrun.Operation, new: taskrun.Operation) }
---@return taskrun.Observer
function observer(spec) end

---Counts the operation in the live view's indicator `label` while it executes.
---@param label string
---@return taskrun.Observer
function activity(label) end

---On the first Ctrl-C the operation gets up to `grace` seconds to finish.
---@param grace number
---@return taskrun.Observer
function background(grace) end

---Fails the operation after `seconds` (each attempt; tried again if retries remain), or with
---`{ cancel = true }` cancels it instead.
---@param seconds number
---@param options? { cancel?: boolean }
---@return taskrun.Observer
function timeout(seconds, options) end

---Makes a progress node (the first one a body makes stands for its operation).
---@class taskrun.ProgressModule
---@overload fun(spec?: { total?: integer, completed?: integer, kind?: "file", description?: string, additional_description?: string, cancellable?: boolean, pausable?: boolean, throughput?: number, eta?: number, file_operation?: string, file_url?: string, file_total_count?: integer, file_completed_count?: integer, on_cancel?: fun(p: taskrun.Progress), on_pause?: fun(p: taskrun.Progress), on_resume?: fun(p: taskrun.Progress) }): taskrun.Progress
local ProgressModule = {}

---The current progress of this coroutine.
---@return taskrun.Progress|nil
function ProgressModule.current() end

---@type taskrun.ProgressModule
progress = nil
