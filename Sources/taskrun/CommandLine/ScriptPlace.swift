// ScriptPlace: `-f FILE` and `-C DIR`, which script a subcommand reads (graph, why, history).
import ArgumentParser

struct ScriptPlace: ParsableArguments {
  @Option(
    name: .customShort("f"),
    help: ArgumentHelp("The workflow script (instead of finding taskrun.lua).", valueName: "file"))
  var file: String?

  @Option(name: .customShort("C"), help: ArgumentHelp("Change to DIR first.", valueName: "dir"))
  var directory: String?
}
