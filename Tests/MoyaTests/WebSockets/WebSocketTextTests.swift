import Foundation
import MoyaTestServer
import NIOCore
import Testing

@testable import Moya

/// Text messages: UTF-8 is checked fragment by fragment as the fragments arrive (Autobahn's
/// section 6, strict), and a character cut between fragments is put together again.
@Suite("WebSocket text: UTF-8 checked as the fragments arrive")
struct WebSocketTextTests {
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        WebSocketTestConnection.frameBytes(opcode: opcode, payload: payload, fin: fin)
    }

    /// "κόσμε" (Autobahn's sample text) in UTF-8: 2-byte characters.
    static let kosme = Array("κόσμε".utf8)

    @Test(
        "A fragmented text message whose first fragment is invalid fails with 1007 before the rest is sent",
        .timeLimit(.minutes(15)),
        arguments: [
            // A code point past U+10FFFF, a lone continuation byte, an overlong form, a surrogate:
            // invalid whatever follows, even the last two when they end the fragment.
            kosme + [0xF4, 0x90, 0x80, 0x80] + Array("-then more".utf8), kosme + [0x80], [0xC0, 0xAF], kosme + [0xED, 0xA0],
        ])
    func invalidFirstFragment(bytes: [UInt8]) async throws {
        try await Self.expectFailureBeforeRest(first: bytes, rest: Array("the rest".utf8), compressed: false)
    }

    /// The server sends `first`, the first fragment of a text message (`compressed`: with RSV1,
    /// on a connection that agreed to permessage-deflate), and waits for the client's next frame:
    /// a client that waited for the end of the message would wait for good (and the time limit
    /// fail the test). Only then does it send `rest`. The client must fail with invalid UTF-8 and
    /// close with 1007 before the rest came.
    static func expectFailureBeforeRest(first: [UInt8], rest: [UInt8], compressed: Bool) async throws {
        let closeBeforeRest = LockedBox<UInt16?>(nil)
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept(headers: compressed ? [("Sec-WebSocket-Extensions", "permessage-deflate")] : [])
            try await connection.write(WebSocketTestConnection.frameBytes(opcode: 1, payload: first, fin: false, rsv1: compressed))
            let frame = try await connection.readFrame()
            closeBeforeRest.withLock { $0 = frame?.opcode == 8 ? frame?.closeCode : nil }
            try await connection.write(Self.frame(0, rest))
            if let frame, frame.opcode == 8 { try await connection.sendClose(code: frame.closeCode) }
            while try await connection.readFrame() != nil {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(
            Remote(server.baseURL, "/"), options: compressed ? .init() : .init(compression: .disabled))
        var failure: WebSocketError?
        do {
            for try await message in connection.messages { Issue.record("received \(message)") }
        } catch {
            if case .underlying(let error as WebSocketError, _) = error { failure = error }
        }
        #expect(failure == .invalidUTF8)
        #expect(closeBeforeRest.withLock { $0 } == 1007)
        await server.shutdown()
    }

    /// `parts` compressed as one permessage-deflate message, each part flushed on its own (so
    /// that each fragment inflates to its part): the message's data is one deflate stream, whose
    /// last flush alone drops its four last bytes (RFC 7692, section 7.2.1).
    static func deflated(_ parts: [[UInt8]]) throws -> [[UInt8]] {
        let deflate = try PerMessageDeflate(agreement: PerMessageDeflateAgreement())
        let allocator = ByteBufferAllocator()
        return try parts.enumerated().map { index, part in
            let compressed = try deflate.compress(ByteBuffer(bytes: part), allocator: allocator)
            return Array(compressed.readableBytesView) + (index < parts.count - 1 ? [0x00, 0x00, 0xFF, 0xFF] : [])
        }
    }

    @Test(
        "A compressed fragmented text message whose first fragment inflates to invalid UTF-8 fails with 1007 before the rest is sent",
        .timeLimit(.minutes(15)))
    func invalidCompressedFirstFragment() async throws {
        let fragments = try Self.deflated([Self.kosme + [0xF4, 0x90, 0x80, 0x80], Array("the rest".utf8)])
        try await Self.expectFailureBeforeRest(first: fragments[0], rest: fragments[1], compressed: true)
    }

    @Test("Compressed text in fragments, cut inside characters, is inflated fragment by fragment and arrives whole")
    func compressedFragments() async throws {
        let text = "Hello-µ@ßöäüàá-UTF-8!! κόσμε €𝄞 \u{10FFFF}\u{E000} end"
        let bytes = Array(text.utf8)
        // Cut inside the 4-byte character and inside a 2-byte one.
        let cuts = [0, 12, 43, 45, bytes.count]
        let parts = (0..<cuts.count - 1).map { Array(bytes[cuts[$0]..<cuts[$0 + 1]]) }
        let fragments = try Self.deflated(parts)
        var frames: [UInt8] = []
        for (index, fragment) in fragments.enumerated() {
            frames += WebSocketTestConnection.frameBytes(
                opcode: index == 0 ? 1 : 0, payload: fragment, fin: index == fragments.count - 1, rsv1: index == 0)
        }
        let bytesToSend = frames
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept(headers: [("Sec-WebSocket-Extensions", "permessage-deflate")])
            try await connection.write(bytesToSend)
            try await connection.sendClose(code: 1000)
            while let frame = try await connection.readFrame(), frame.opcode != 8 {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"))
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received == [.text(text)])
        await server.shutdown()
    }

    @Test(
        "Valid text cut anywhere between fragments, inside a character included, arrives whole (Autobahn 6.2)",
        arguments: [1, 2, 3, 5, 7])
    func splitCharacters(fragmentSize: Int) async throws {
        // 1-, 2-, 3- and 4-byte characters: every cut of a character falls between fragments
        // for one of the sizes.
        let text = "Hello-µ@ßöäüàá-UTF-8!! κόσμε €𝄞 \u{10FFFF}\u{E000} end"
        let bytes = Array(text.utf8)
        var frames: [UInt8] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + fragmentSize, bytes.count)
            frames += Self.frame(start == 0 ? 1 : 0, Array(bytes[start..<end]), fin: end == bytes.count)
            start = end
        }
        let bytesToSend = frames
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.write(bytesToSend)
            try await connection.sendClose(code: 1000)
            // Returning after the client's answer closes the connection.
            while let frame = try await connection.readFrame(), frame.opcode != 8 {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received == [.text(text)])
        await server.shutdown()
    }

    @Test("A large text message, in one frame or in fragments cut inside characters, arrives whole (the reader makes its String)")
    func largeText() async throws {
        // Over 64 KiB, larger than one read of the socket.
        let text = String(repeating: "κόσμε, €𝄞 and some ASCII;", count: 5_000)
        let bytes = Array(text.utf8)
        #expect(bytes.count > 64 << 10)
        let third = bytes.count / 3 + 1
        let frames =
            Self.frame(1, bytes) + Self.frame(1, Array(bytes[..<third]), fin: false) + Self.frame(0, Array(bytes[third..<(2 * third)]), fin: false)
            + Self.frame(0, Array(bytes[(2 * third)...]))
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            try await connection.write(frames)
            try await connection.sendClose(code: 1000)
            while let frame = try await connection.readFrame(), frame.opcode != 8 {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received == [.text(text), .text(text)])
        await server.shutdown()
    }

    @Test(
        "Invalid text fails with 1007 at the fragment that makes it invalid, or at the end for a character cut by the end (Autobahn 6.3, 6.4, 6.6)",
        arguments: [
            // The bad byte in the second of three fragments; the third is never needed.
            ([kosme, [0xED, 0xA0, 0x80], Array("more".utf8)], 2),
            // A character begun at the end of a fragment and not finished by the next one.
            ([kosme + [0xE2, 0x82], [0x41], Array("more".utf8)], 2),
            // A character the last fragment leaves cut.
            ([kosme, kosme + [0xF0, 0x9D, 0x84]], 2),
            // One message in one frame, invalid.
            ([kosme + [0xFF]], 1),
        ] as [([[UInt8]], Int)])
    func invalidLaterFragment(fragments: [[UInt8]], failingAt: Int) async throws {
        // The server sends one fragment at a time and looks for the client's close frame in
        // between; it counts the fragments sent before it.
        let sentBeforeClose = LockedBox<Int?>(nil)
        let server = try await WebSocketTestServer.start { connection in
            try await connection.accept()
            for (index, fragment) in fragments.enumerated() {
                try await connection.write(Self.frame(index == 0 ? 1 : 0, fragment, fin: index == fragments.count - 1))
                // A ping after each fragment: its pong, or the close frame before it, says
                // whether the client has read the fragment without failing.
                try await connection.writeFrame(opcode: 9, payload: [UInt8(index)])
                guard let answer = try await connection.readFrame() else { return }
                if answer.opcode == 8 {
                    sentBeforeClose.withLock { $0 = index + 1 }
                    try await connection.sendClose(code: answer.closeCode)
                    while try await connection.readFrame() != nil {}
                    return
                }
            }
            while try await connection.readFrame() != nil {}
        }
        let connection = try await MoyaProvider<Remote>().webSocket(Remote(server.baseURL, "/"), options: .init(compression: .disabled))
        var failure: WebSocketError?
        do {
            for try await message in connection.messages { Issue.record("received \(message)") }
        } catch {
            if case .underlying(let error as WebSocketError, _) = error { failure = error }
        }
        #expect(failure == .invalidUTF8)
        #expect(sentBeforeClose.withLock { $0 } == failingAt)
        await server.shutdown()
    }

    @Test("The validator keeps at most a cut character between checks and fails on the first byte that cannot become UTF-8")
    func validatorSteps() {
        var validator = WebSocketTextValidator()
        var message = ByteBuffer(bytes: Array("ab".utf8) + [0xF0, 0x9F])
        let firstPart = validator.check(message, isFinal: false)
        #expect(firstPart)
        message.writeBytes([0x98, 0x80] + Array("cd".utf8))
        let whole = validator.check(message, isFinal: true)
        #expect(whole)
        #expect(validator.text(of: message) == "ab😀cd")
        // A whole message in one check, ASCII and not.
        #expect(WebSocketTextValidator.text(of: ByteBuffer(string: "plain")) == "plain")
        #expect(WebSocketTextValidator.text(of: ByteBuffer(bytes: [0xE2, 0x82, 0xAC])) == "€")
        #expect(WebSocketTextValidator.text(of: ByteBuffer(bytes: [0xE2, 0x82])) == nil)
        #expect(WebSocketTextValidator.text(of: ByteBuffer()) == "")
        // A lead byte that no character has fails at once, even as the last byte.
        var bad = WebSocketTextValidator()
        let badLead = bad.check(ByteBuffer(bytes: [0x41, 0xF8]), isFinal: false)
        #expect(!badLead)
    }

    @Test("The validator agrees with the standard library's UTF-8 validation on random bytes: valid, where it fails, where a character is cut")
    func validatorAgreesWithTheStandardLibrary() async throws {
        guard #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else { return }
        // The bytes where UTF-8's rules change, and any byte; a fixed seed, so a failure repeats.
        let edges: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5,
            0xFF,
        ]
        var random = SplitMix64(seed: 0x5EED)
        for trial in 0..<100_000 {
            // Seconds of a debug build's work: the other tests share the cooperative pool.
            await yieldNow(every: 500, trial)
            let count = Int(random.next() % 48)
            let bytes: [UInt8] = (0..<count).map { _ in
                trial % 2 == 0 ? edges[Int(random.next() % UInt64(edges.count))] : UInt8(truncatingIfNeeded: random.next())
            }
            try bytes.withUnsafeBufferPointer { buffer in
                var expected = WebSocketTextValidator.Outcome.valid(isASCII: bytes.allSatisfy { $0 < 0x80 })
                do throws(UTF8.ValidationError) {
                    _ = try UTF8Span(validating: buffer.span)
                } catch {
                    let cut = error.kind == .truncatedScalar && error.byteOffsets.upperBound == buffer.count
                    expected = cut ? .cut(at: error.byteOffsets.lowerBound) : .invalid(at: error.byteOffsets.lowerBound)
                }
                let found = WebSocketTextValidator.scan(buffer)
                try #require(found == expected, "\(bytes.map { String($0, radix: 16) })")
            }
        }
    }
}
