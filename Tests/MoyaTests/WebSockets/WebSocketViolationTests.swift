import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// What the client does with a server that breaks RFC 6455: each violation closes the connection
/// with its code, once, and ends the messages with one ``WebSocketError``. The cases mirror the
/// client-mode sections of the Autobahn|Testsuite named in each test (its runner needs Python 2,
/// which these machines lack).
@Suite("WebSocket protocol violations and limits")
struct WebSocketViolationTests {
    /// What a conversation with a misbehaving server came to.
    struct Outcome {
        /// The messages received before the end.
        var received: [WebSocketMessage] = []
        /// The error the messages ended with, if any.
        var error: WebSocketError?
        /// The code of the client's close frame, if it sent one.
        var clientCloseCode: UInt16?
    }

    /// Opens a connection to a server that accepts, writes `bytes` (frames), then reads the
    /// client's frames until its close frame, answers it, and closes.
    func converse(_ bytes: [UInt8], options: WebSocketOptions = .init(compression: .disabled)) async throws -> Outcome {
        let clientClose = LockedBox<UInt16?>(nil)
        // Fired when the server is done with the connection: after the client's close frame, or
        // at the connection's end without one.
        let serverDone = Signal()
        let server = try await WebSocketTestServer.start { connection in
            defer { serverDone.fire() }
            try await connection.accept()
            try await connection.write(bytes)
            while let frame = try await connection.readFrame() {
                if frame.opcode == 8 {
                    clientClose.withLock { $0 = frame.closeCode }
                    try await connection.sendClose(code: frame.closeCode)
                    return
                }
            }
        }
        defer { _Concurrency.Task { await server.shutdown() } }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: options)
        var outcome = Outcome()
        do {
            for try await message in connection.messages { outcome.received.append(message) }
        } catch {
            guard case .underlying(let failure as WebSocketError, _) = error else {
                Issue.record("not a WebSocketError: \(error)")
                return outcome
            }
            outcome.error = failure
        }
        // The close frame has been read once the server is done with the connection.
        await serverDone.wait()
        outcome.clientCloseCode = clientClose.withLock { $0 }
        return outcome
    }

    static func frame(
        _ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false, mask: [UInt8]? = nil
    )
        -> [UInt8]
    {
        WebSocketTestConnection.frameBytes(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, mask: mask)
    }

    static let text = Array("hello".utf8)

    @Test(
        "Reserved bits (Autobahn 3.1 to 3.7): RSV1 without an extension, RSV2, RSV3 close with 1002",
        arguments: [
            frame(1, text, rsv1: true), frame(1, text, rsv2: true), frame(1, text, rsv3: true), frame(9, text, rsv2: true),
            frame(2, [1, 2], rsv3: true),
        ])
    func reservedBits(bytes: [UInt8]) async throws {
        let outcome = try await converse(Self.frame(1, Array("before".utf8)) + bytes)
        #expect(outcome.received == [.text("before")])
        #expect(outcome.error.map { if case .protocolViolation = $0 { true } else { false } } == true, "\(String(describing: outcome.error))")
        #expect(outcome.clientCloseCode == 1002)
    }

    @Test("Reserved opcodes (Autobahn 4.1 and 4.2): data 3 to 7 and control 11 to 15 close with 1002", arguments: [3, 5, 7, 11, 15] as [UInt8])
    func reservedOpcodes(opcode: UInt8) async throws {
        let outcome = try await converse(Self.frame(opcode, Self.text))
        #expect(outcome.error.map { if case .protocolViolation(let reason) = $0 { reason.contains("opcode") } else { false } } == true)
        #expect(outcome.clientCloseCode == 1002)
    }

    @Test(
        "Fragmentation errors (Autobahn 5.1, 5.2, 5.9 to 5.20): a fragmented control frame, a continuation with nothing to continue, a new message inside a fragmented one",
        arguments: [
            frame(9, text, fin: false) + frame(0, text),
            frame(0, text),
            frame(0, text, fin: false),
            frame(1, text, fin: false) + frame(1, text),
            frame(1, text, fin: false) + frame(2, text, fin: false),
        ])
    func fragmentation(bytes: [UInt8]) async throws {
        let outcome = try await converse(bytes)
        #expect(outcome.received.isEmpty)
        #expect(outcome.error.map { if case .protocolViolation = $0 { true } else { false } } == true, "\(String(describing: outcome.error))")
        #expect(outcome.clientCloseCode == 1002)
    }

    @Test("A control frame of 126 bytes (Autobahn 2.5) closes with 1002; 125 bytes is fine (2.4)")
    func controlFrameLength() async throws {
        let long = try await converse(Self.frame(9, [UInt8](repeating: 7, count: 126)))
        #expect(long.clientCloseCode == 1002)
        #expect(long.error.map { if case .protocolViolation = $0 { true } else { false } } == true)
        let fine = try await converse(Self.frame(9, [UInt8](repeating: 7, count: 125)) + Self.frame(8, [0x03, 0xE8]))
        #expect(fine.error == nil)
        #expect(fine.clientCloseCode == 1000)
    }

    @Test("A masked frame from the server closes with 1002")
    func maskedFrame() async throws {
        let outcome = try await converse(Self.frame(1, Self.text, mask: [1, 2, 3, 4]))
        #expect(outcome.error == .protocolViolation("a masked frame from the server"))
        #expect(outcome.clientCloseCode == 1002)
    }

    @Test(
        "Invalid UTF-8 in a text message (Autobahn 6.3 to 6.21) closes with 1007, whole or across fragments",
        arguments: [
            frame(1, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80, 0x65, 0x64, 0x69, 0x74, 0x65, 0x64]),
            frame(1, [0xC0, 0xAF]),
            frame(1, [0xF4, 0x90, 0x80, 0x80]),
            frame(1, [0xCE, 0xBA, 0xE1], fin: false) + frame(0, [0xBD, 0xB9, 0xFF]),
            frame(1, [0xE1, 0xBD]),
        ])
    func invalidUTF8(bytes: [UInt8]) async throws {
        let outcome = try await converse(bytes)
        #expect(outcome.error == .invalidUTF8)
        #expect(outcome.clientCloseCode == 1007)
    }

    @Test("Valid UTF-8 split inside a character across fragments (Autobahn 6.2) arrives whole")
    func utf8AcrossFragments() async throws {
        let bytes = Array("κόσμε 🌍".utf8)
        let outcome = try await converse(
            Self.frame(1, Array(bytes[0..<3]), fin: false) + Self.frame(0, Array(bytes[3..<13]), fin: false) + Self.frame(0, Array(bytes[13...]))
                + Self.frame(8, [0x03, 0xE8]))
        #expect(outcome.received == [.text("κόσμε 🌍")])
        #expect(outcome.error == nil)
    }

    @Test(
        "Close frames that break the rules (Autobahn 7.3.2, 7.5.1, 7.9): one byte, an invalid code, an invalid UTF-8 reason",
        arguments: [
            (frame(8, [0x03]), 1002), (frame(8, [0x03, 0xE7]), 1002), (frame(8, [0x03, 0xEC]), 1002), (frame(8, [0x03, 0xED]), 1002),
            (frame(8, [0x03, 0xEE]), 1002), (frame(8, [0x03, 0xF7]), 1002), (frame(8, [0x07, 0xD0]), 1002), (frame(8, [0x13, 0x88]), 1002),
            (frame(8, [0x03, 0xE8, 0xCE, 0xBA, 0xE1, 0xBD]), 1007),
        ] as [([UInt8], UInt16)])
    func invalidClose(bytes: [UInt8], code: UInt16) async throws {
        let outcome = try await converse(bytes)
        #expect(outcome.clientCloseCode == code)
        #expect(outcome.error != nil)
    }

    @Test(
        "Valid close codes (Autobahn 7.7) are answered with the same code and end the messages without an error",
        arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16])
    func validCloseCodes(code: UInt16) async throws {
        let outcome = try await converse(Self.frame(8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("ok".utf8)))
        #expect(outcome.error == nil)
        #expect(outcome.clientCloseCode == code)
    }

    @Test("A message over the limit (Autobahn 9.x): one frame, or fragments adding up, closes with 1009 without holding more than the limit")
    func messageTooBig() async throws {
        let options = WebSocketOptions(maximumMessageSize: 1000, compression: .disabled)
        let single = try await converse(Self.frame(2, [UInt8](repeating: 1, count: 1001)), options: options)
        #expect(single.error == .messageTooBig(limit: 1000))
        #expect(single.clientCloseCode == 1009)
        let fragments = try await converse(
            Self.frame(2, [UInt8](repeating: 1, count: 600), fin: false) + Self.frame(0, [UInt8](repeating: 1, count: 600)), options: options)
        #expect(fragments.error == .messageTooBig(limit: 1000))
        #expect(fragments.clientCloseCode == 1009)
        let atTheLimit = try await converse(Self.frame(2, [UInt8](repeating: 1, count: 1000)) + Self.frame(8, [0x03, 0xE8]), options: options)
        #expect(atTheLimit.received == [.binary(Data(repeating: 1, count: 1000))])
        #expect(atTheLimit.error == nil)
    }

    @Test("A close frame without a code is answered with an empty close frame; the code reported is 1005")
    func closeWithoutCode() async throws {
        let outcome = try await converse(Self.frame(8))
        #expect(outcome.error == nil)
        #expect(outcome.clientCloseCode == nil)
    }
}
