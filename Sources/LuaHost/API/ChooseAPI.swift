// Choices: choose(question, choices, { default = }) in a body, and choice(...) as a condition.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// The question at `i`, its choices at `i + 1` and its options at `i + 2` (the call's
  /// arguments #1 to #3), checked.
  func question(_ s: LuaStack, at i: Int32, _ function: String) throws -> (Question, options: Int32?) {
    func bad(_ index: Int32, _ expected: String) -> ScriptError {
      .badArgument(Int(index - i + 1), to: function, expected: expected, got: describeArgument(s, index))
    }
    guard let text = s.string(i), !text.isEmpty, text.utf8.count <= 1000 else {
      throw bad(i, "question (a string of 1 to 1000 bytes)")
    }
    try displayText(text, "\(function): the question")
    let list = i + 1
    guard s.type(list) == LUA_TTABLE, (1...20).contains(s.rawLength(list)) else {
      throw bad(list, "list of 1 to 20 choices")
    }
    var choices: [String] = []
    for k in 0..<s.rawLength(list) {
      s.rawGet(list, k + 1)
      defer { s.pop() }
      guard s.type(-1) == LUA_TSTRING, let choice = s.string(-1), !choice.isEmpty, choice.utf8.count <= 100,
        Int(choice) == nil
      else {
        let got = s.type(-1) != LUA_TSTRING ? s.typeName(-1) : DisplayText.quoted(s.string(-1) ?? "")
        throw ScriptError("\(function): choice #\(k + 1) must be a name of 1 to 100 bytes, not a number (got \(got))")
      }
      try displayText(choice, "\(function): choice #\(k + 1)")
      guard !choices.contains(where: { $0.lowercased() == choice.lowercased() }) else {
        throw ScriptError("\(function): the choice '\(choice)' is given twice")
      }
      choices.append(choice)
    }
    var defaultChoice: String?
    let options = i + 2
    if !s.isNil(options) {
      guard s.type(options) == LUA_TTABLE else { throw bad(options, "table of options") }
      try checkFields(s, options, valid: function == "choose" ? ["default"] : ["default", "skip", "fail"], in: function)
      if let name = try optionalString(s, options, "default", in: function) {
        guard let choice = choices.first(where: { $0.lowercased() == name.lowercased() }) else {
          throw ScriptError("\(function): the default '\(name)' is not one of the choices")
        }
        defaultChoice = choice
      }
    }
    return (Question(text: text, choices: choices, defaultChoice: defaultChoice), s.isNil(options) ? nil : options)
  }

  /// `choose(question, choices, { default = })` from a coroutine: answered with the choice.
  func chooseRequest(_ co: LuaCoroutine, base: Int32) throws {
    let s = LuaStack(L: co.thread)
    let (question, _) = try self.question(s, at: base, "choose")
    s.setTop(base - 3)
    if dryRun {  // a dry run asks nothing: it takes what it would away from a terminal
      let choice = question.defaultChoice ?? question.choices[0]
      return succeed(co) { s in
        s.push(choice); return 1
      }
    }
    scheduler.choose(question, for: co.op, answers: choiceAnswers, asker: "choose()") { [unowned self] result in
      switch result {
      case .success(let choice):
        succeed(co) { s in
          s.push(choice); return 1
        }
      case .failure(let refused): fail(co, refused.description)
      }
    }
  }

  /// `choice(question, choices, { default =, skip = {…}, fail = {…} })`: a condition that asks
  /// before its operation starts; a choice listed in `skip` skips it, one in `fail` fails it,
  /// any other lets it run.
  func choiceCondition(_ s: LuaStack) throws -> BlockCondition {
    let (question, options) = try self.question(s, at: 1, "choice")
    func names(_ key: String) throws -> Set<String> {
      guard let options else { return [] }
      let found: Set<String>
      switch s.rawGet(options, key) {
      case LUA_TNIL: found = []
      case LUA_TSTRING: found = [s.string(-1)!]
      case LUA_TTABLE:
        found = Set(
          (0..<s.rawLength(s.top)).compactMap { k in
            s.rawGet(s.top, k + 1)
            defer { s.pop() }
            return s.string(-1)
          })
      default: found = ["\u{0}"]  // refused below
      }
      s.pop()
      for name in found where question.choice(named: name) == nil || Int(name) != nil {
        throw ScriptError("choice: '\(key)' must name choices (got \(DisplayText.quoted(name)))")
      }
      return Set(found.compactMap { question.choice(named: $0) })
    }
    let (skip, fail) = (try names("skip"), try names("fail"))
    if let both = question.choices.first(where: { skip.contains($0) && fail.contains($0) }) {
      throw ScriptError("choice: '\(both)' is in both 'skip' and 'fail'")
    }
    let answers = choiceAnswers
    return BlockCondition(name: "choice") { op, scheduler, done in
      scheduler.choose(question, for: op, answers: answers, asker: "choice()") { result in
        switch result {
        case .success(let choice) where skip.contains(choice): done(.skipped("\"\(question.text)\": \(choice)"))
        case .success(let choice) where fail.contains(choice): done(.failed("\"\(question.text)\": \(choice)"))
        case .success: done(.satisfied)
        case .failure(let refused): done(.failed(refused.description))
        }
      }
    }
  }
}
