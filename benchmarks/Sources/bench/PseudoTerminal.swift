// PseudoTerminal: a terminal for a benchmarked program to draw on, read and discarded here.
import Foundation

/// An 80×24 pseudo-terminal; a thread drains what the program writes, as a terminal would.
final class PseudoTerminal: @unchecked Sendable {
  let path: String
  private let controller: Int32
  private let device: Int32

  init?() {
    var controller: Int32 = -1, device: Int32 = -1
    var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
    var name = [CChar](repeating: 0, count: 128)
    guard openpty(&controller, &device, &name, nil, &size) == 0 else { return nil }
    self.controller = controller
    self.device = device  // held open, so reads never end early between programs
    path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    Thread.detachNewThread { [controller] in
      var buffer = [UInt8](repeating: 0, count: 65536)
      while read(controller, &buffer, buffer.count) > 0 {}
    }
  }
}
