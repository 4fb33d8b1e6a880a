// Choice: a question with choices (`choose`), asked on the terminal one at a time, or answered without one.

/// A question and its choices, as an alert with buttons asks it.
public struct Question: Sendable, Equatable {
  public let text: String
  public let choices: [String]
  /// What is taken away from a terminal (and on an empty answer at one); nil: none.
  public let defaultChoice: String?

  public init(text: String, choices: [String], defaultChoice: String?) {
    (self.text, self.choices, self.defaultChoice) = (text, choices, defaultChoice)
  }

  /// The choice `word` names: itself, ignoring case, or its number (1 for the first).
  public func choice(named word: String) -> String? {
    let word = word.trimmed(newlines: false)
    if let number = Int(word), choices.indices.contains(number - 1) { return choices[number - 1] }
    return choices.first { $0.lowercased() == word.lowercased() }
  }
}

/// How questions are answered: `answer` (`--answer`) takes the choice it names at once; else
/// `ask` asks on the terminal (nil: there is none, and the question's default is taken).
public struct ChoiceAnswers: Sendable {
  public var answer: String?
  public var ask: (@Sendable (Question) -> String?)?
  public init(answer: String? = nil, ask: (@Sendable (Question) -> String?)? = nil) {
    (self.answer, self.ask) = (answer, ask)
  }
}

extension Scheduler {
  /// Answers `question` for `op`'s body, its condition or the top level (nil): `--answer` if
  /// it names a choice, else on the terminal (one question at a time, as `confirm` asks), else
  /// the question's default, with a note that says where the answer came from. `done` gets
  /// the choice, or why there is none.
  public func choose(
    _ question: Question, for op: OperationNode?, answers: ChoiceAnswers, asker: String = "choose()",
    done: @escaping (Result<String, ChoiceRefused>) -> Void
  ) {
    if let word = answers.answer, let choice = question.choice(named: word) {
      note("taskrun: \"\(question.text)\": \(choice) (--answer)")
      return done(.success(choice))
    }
    guard let ask = answers.ask else {
      guard let choice = question.defaultChoice else {
        return done(
          .failure(
            ChoiceRefused(
              "cannot ask \"\(question.text)\": not running on a terminal, and it has no default "
                + "(give \(asker) a default, or run with --answer CHOICE)")))
      }
      note("taskrun: \"\(question.text)\": \(choice) (the default: not on a terminal)")
      return done(.success(choice))
    }
    prompts.enter(wanted: { op.map { !$0.isFinished } ?? true }) { [unowned self] finished in
      announcer.prompt(question.text, at: elapsed)
      perform({ ask(question) }) { [unowned self] answer in
        announcer.prompt(nil, at: elapsed)
        done(answer.map { .success($0) } ?? .failure(ChoiceRefused("\"\(question.text)\": no answer")))
        finished()
      }
    }
  }
}

/// Why a question got no choice.
public struct ChoiceRefused: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}
