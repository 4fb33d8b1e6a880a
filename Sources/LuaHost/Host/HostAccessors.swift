// HostAccessors: the host's settings and hot state under the names callers use, kept in its parts.
import TaskEngine

extension ScriptHost {
  /// The coroutine whose code is running now (nil between resumes).
  var current: LuaCoroutine? {
    get { coroutines.current }
    set { coroutines.current = newValue }
  }

  /// The Lua thread whose call into the host is in progress (handlers run on its stack).
  var callState: OpaquePointer? {
    get { coroutines.callState }
    set { coroutines.callState = newValue }
  }

  /// io.write to standard output (and error) goes through the reporters (a live view draws
  /// there).
  public var captureWrites: Bool {
    get { writes.capturing }
    set { writes.capturing = newValue }
  }

  /// A load that only reads the script: writes become messages (see `WriteCapture`).
  var writesAreMessages: Bool {
    get { writes.asMessages }
    set { writes.asMessages = newValue }
  }

  /// `confirm(prompt)` is answered yes at once (--yes).
  public var assumeYes: Bool {
    get { confirm.assumeYes }
    set { confirm.assumeYes = newValue }
  }

  /// How `confirm(prompt)` asks (nil: no terminal).
  public var ask: (@Sendable (String) -> Bool?)? {
    get { confirm.ask }
    set { confirm.ask = newValue }
  }

  /// How `choose(question, choices)` is answered: `--answer`, the terminal, or its default.
  public var choiceAnswers: ChoiceAnswers {
    get { confirm.choices }
    set { confirm.choices = newValue }
  }

  /// Bytes the Lua heap may hold while Lua code runs (`--memory`, else the default of
  /// `MemoryBudget`; 0: no limit), and whether it is that default.
  public var memoryLimit: Int { heap.bytes }
  public var memoryLimitIsDefault: Bool { heap.isDefault }

  /// `--executor`: "slurm" or "local" (nil: each queue says, else this machine).
  var executorChoice: String? {
    get { executor.choice }
    set { executor.choice = newValue }
  }

  /// The job name of this run's Slurm jobs.
  var slurmTag: String { executor.slurmTag }
}
