import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import Moya

/// The hand-over between senders and the event loop, step by step on an embedded channel whose
/// writability the test sets: the orders of events a loaded machine makes, made on purpose.
@Suite("WebSocket outbox: senders, drains and writability")
struct WebSocketOutboxTests {
    /// A conversation on an active embedded channel, and its outbox.
    static func conversation() throws -> (EmbeddedChannel, WebSocketConversation, WebSocketOutbox) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        let (parts, handlers) = WebSocketConnectionParts.make(
            options: .init(compression: .disabled), deflate: nil, subprotocol: nil, on: channel.eventLoop)
        try channel.pipeline.syncOperations.addHandlers(handlers)
        return (channel, parts.conversation.value, parts.outbox)
    }

    static func wakesLoop(_ outcome: WebSocketOutbox.Outcome) -> Bool {
        if case .queuedWakeLoop = outcome { return true }
        return false
    }

    /// How many one-character text frames were written since the last look: each is 7 bytes
    /// on the wire (2 of header, 4 of mask, 1 of payload), which NIO's encoder may write in
    /// several buffers.
    static func written(_ channel: EmbeddedChannel) throws -> Int {
        var bytes = 0
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytes }
        return bytes / 7
    }

    @Test("Messages queued before the loop drains go out together; the next sender after a drain wakes the loop")
    func batches() throws {
        let (channel, conversation, outbox) = try Self.conversation()
        #expect(Self.wakesLoop(outbox.enqueue(.text("1"))))
        #expect(!Self.wakesLoop(outbox.enqueue(.text("2"))), "a drain is on its way")
        conversation.drain()
        #expect(try Self.written(channel) == 2)
        #expect(Self.wakesLoop(outbox.enqueue(.text("3"))))
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A drain that finds the channel full leaves the messages to the writability event, which sends them")
    func heldBack() throws {
        let (channel, conversation, outbox) = try Self.conversation()
        channel.isWritable = false
        #expect(Self.wakesLoop(outbox.enqueue(.text("1"))))
        conversation.drain()
        #expect(try Self.written(channel) == 0)
        #expect(!Self.wakesLoop(outbox.enqueue(.text("2"))), "the writability event will drain")
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try Self.written(channel) == 2)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A writability event before a sender's drain, then a full channel: a later message still wakes the loop")
    func writabilityBeforeDrain() throws {
        let (channel, conversation, outbox) = try Self.conversation()
        // A sender queues and asks for a drain; before the drain runs, the channel becomes
        // writable and the event sends the message; the message fills the channel, so the
        // drain, when it runs, finds it full and holds back with nothing queued.
        #expect(Self.wakesLoop(outbox.enqueue(.text("1"))))
        channel.pipeline.fireChannelWritabilityChanged()
        channel.isWritable = false
        conversation.drain()
        // The channel empties: its event comes with nothing queued.
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try Self.written(channel) == 1)
        #expect(Self.wakesLoop(outbox.enqueue(.text("2"))), "nothing else would ever send it")
        conversation.drain()
        #expect(try Self.written(channel) == 1)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A full queue makes senders wait; a drain lets them go on; a close fails them and what was queued")
    func fullQueue() async throws {
        let (channel, conversation, outbox) = try Self.conversation()
        channel.isWritable = false
        #expect(Self.wakesLoop(outbox.enqueue(.binary(Data(count: WebSocketOutbox.limitBytes)))))
        guard case .full = outbox.enqueue(.text("more")) else {
            Issue.record("a full queue took another message")
            return
        }
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        await outbox.waitForRoom()
        #expect(Self.wakesLoop(outbox.enqueue(.text("more"))))
        conversation.close(code: .normalClosure, reason: "", promise: nil)
        guard case .closed(let error) = outbox.enqueue(.text("late")) else {
            Issue.record("a closed outbox took a message")
            return
        }
        #expect(error == .connectionClosed(code: .normalClosure, reason: ""))
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
