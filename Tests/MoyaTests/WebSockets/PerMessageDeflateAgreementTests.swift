import Testing

@testable import Moya

/// The permessage-deflate answer of a server, read against the client's offer (RFC 7692,
/// section 7).
@Suite("permessage-deflate negotiation")
struct PerMessageDeflateAgreementTests {
    static func negotiate(_ values: [String], offer: WebSocketCompression = .default) throws(WebSocketError) -> PerMessageDeflateAgreement? {
        try PerMessageDeflateAgreement.negotiate(values, offer: offer)
    }

    @Test("No extension in the answer: no compression, whatever was offered")
    func declined() throws {
        #expect(try Self.negotiate([]) == nil)
        #expect(try Self.negotiate([""]) == nil)
    }

    @Test("The parameters the server may answer are read, with quoted values")
    func parameters() throws {
        let agreement = try #require(
            try Self.negotiate([
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=\"12\""
            ]))
        #expect(agreement.serverNoContextTakeover)
        #expect(agreement.clientNoContextTakeover)
        #expect(agreement.serverMaxWindowBits == 10)
        #expect(agreement.clientMaxWindowBits == 12)
        let plain = try #require(try Self.negotiate(["permessage-deflate"]))
        #expect(plain == PerMessageDeflateAgreement())
    }

    @Test("What the client offered binds the answer: its no-context-takeover and its window limit")
    func offerBinds() throws {
        let offer = WebSocketCompression.perMessageDeflate(clientNoContextTakeover: true, clientMaxWindowBits: 11)
        let agreement = try #require(try Self.negotiate(["permessage-deflate"], offer: offer))
        #expect(agreement.clientNoContextTakeover)
        #expect(agreement.clientMaxWindowBits == 11)
    }

    @Test(
        "Answers that fail the handshake",
        arguments: [
            (["x-webkit-deflate-frame"], WebSocketCompression.default),
            (["permessage-deflate, permessage-deflate"], .default),
            (["permessage-deflate; foo"], .default),
            (["permessage-deflate; server_max_window_bits=10; server_max_window_bits=10"], .default),
            (["permessage-deflate; server_max_window_bits=16"], .default),
            (["permessage-deflate; server_max_window_bits=09"], .default),
            (["permessage-deflate; server_max_window_bits"], .default),
            (["permessage-deflate; client_max_window_bits=8"], .default),
            (["permessage-deflate; server_no_context_takeover=1"], .default),
            (["permessage-deflate; server_max_window_bits=12"], .perMessageDeflate(serverMaxWindowBits: 10)),
            (["permessage-deflate; client_max_window_bits=12"], .perMessageDeflate(clientMaxWindowBits: 10)),
            (["permessage-deflate"], .perMessageDeflate(serverNoContextTakeover: true)),
            (["permessage-deflate"], .perMessageDeflate(serverMaxWindowBits: 10)),
            (["permessage-deflate"], .disabled),
        ] as [([String], WebSocketCompression)])
    func refused(values: [String], offer: WebSocketCompression) {
        #expect(throws: WebSocketError.self) { try Self.negotiate(values, offer: offer) }
    }

    @Test("The offer: with its defaults, and with every parameter")
    func offers() {
        #expect(WebSocketCompression.default.offer == "permessage-deflate; client_max_window_bits")
        #expect(WebSocketCompression.disabled.offer == nil)
        let full = WebSocketCompression.perMessageDeflate(
            clientNoContextTakeover: true, serverNoContextTakeover: true, clientMaxWindowBits: 20, serverMaxWindowBits: 3)
        #expect(
            full.offer
                == "permessage-deflate; client_no_context_takeover; server_no_context_takeover; client_max_window_bits=15; server_max_window_bits=9")
    }
}
