// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import OriginFetch

@Suite struct AddressPolicyTests {
    /// Every special-purpose range, its edges, and the public addresses right next to them.
    static let table: [(String, SpecialRange?)] = [
        // IPv4: refused
        ("0.0.0.0", .thisNetwork), ("0.255.255.255", .thisNetwork),
        ("10.0.0.0", .privateNetwork), ("10.255.255.255", .privateNetwork),
        ("100.64.0.0", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback), ("127.0.0.2", .loopback),
        ("169.254.169.254", .linkLocal), ("169.254.0.1", .linkLocal),
        ("172.16.0.0", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("192.0.0.8", .protocolAssignments), ("192.0.0.170", .protocolAssignments),
        ("192.0.2.1", .documentation), ("198.51.100.7", .documentation), ("203.0.113.255", .documentation),
        ("192.88.99.1", .reserved),
        ("192.168.0.1", .privateNetwork), ("192.168.255.255", .privateNetwork),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.254", .reserved),
        ("255.255.255.255", .broadcast),
        // IPv4: allowed (public neighbours of the ranges above)
        ("1.1.1.1", nil), ("8.8.8.8", nil), ("9.255.255.255", nil), ("11.0.0.0", nil),
        ("100.63.255.255", nil), ("100.128.0.0", nil), ("126.255.255.255", nil), ("128.0.0.0", nil),
        ("169.253.255.255", nil), ("169.255.0.0", nil), ("172.15.255.255", nil), ("172.32.0.0", nil),
        ("192.0.1.255", nil), ("192.0.3.0", nil), ("192.167.255.255", nil), ("192.169.0.0", nil),
        ("198.17.255.255", nil), ("198.20.0.0", nil), ("223.255.255.255", nil), ("93.184.216.34", nil),
        // IPv6: refused
        ("::", .unspecified), ("::1", .loopback),
        ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal),
        ("fec0::1", .siteLocal), ("feff::1", .siteLocal),
        ("fc00::1", .uniqueLocal), ("fd12:3456:789a::1", .uniqueLocal),
        ("ff02::1", .multicast), ("ff0e::1", .multicast),
        ("100::1", .discardOnly),
        ("2001:db8::1", .documentation), ("3fff::1", .documentation),
        ("2001:2::1", .benchmarking), ("2001:10::1", .protocolAssignments),
        ("4000::1", .reserved), ("1000::1", .reserved), ("::2:0:0:1", .reserved), ("e000::1", .reserved),
        // IPv6 embedding a refused IPv4 address
        ("::ffff:127.0.0.1", .embeddedIPv4(.loopback)), ("::ffff:10.1.2.3", .embeddedIPv4(.privateNetwork)),
        ("::ffff:169.254.169.254", .embeddedIPv4(.linkLocal)), ("::ffff:0.0.0.0", .embeddedIPv4(.thisNetwork)),
        ("::127.0.0.1", .embeddedIPv4(.loopback)), ("::192.168.1.1", .embeddedIPv4(.privateNetwork)),
        ("::ffff:0:127.0.0.1", .embeddedIPv4(.loopback)),
        ("64:ff9b::127.0.0.1", .embeddedIPv4(.loopback)), ("64:ff9b::a9fe:a9fe", .embeddedIPv4(.linkLocal)),
        ("64:ff9b:1::10.0.0.1", .embeddedIPv4(.privateNetwork)),
        ("2002:7f00:1::", .embeddedIPv4(.loopback)), ("2002:a00:1::1", .embeddedIPv4(.privateNetwork)),
        ("2002:c0a8:101::", .embeddedIPv4(.privateNetwork)), ("2002:a9fe:a9fe::", .embeddedIPv4(.linkLocal)),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", .embeddedIPv4(.loopback)),  // Teredo client ~0x80fffffe = 127.0.0.1
        ("2001:0:a00:1::1", .embeddedIPv4(.privateNetwork)),  // Teredo server 10.0.0.1
        ("::ffff:100.64.0.1", .embeddedIPv4(.sharedAddressSpace)), ("::ffff:224.0.0.1", .embeddedIPv4(.multicast)),
        ("::ffff:255.255.255.255", .embeddedIPv4(.broadcast)),
        // IPv6: allowed
        ("2606:4700::1111", nil), ("2a00:1450:4001::200e", nil), ("2001:4860:4860::8888", nil),
        ("::ffff:8.8.8.8", nil), ("64:ff9b::808:808", nil), ("2002:808:808::1", nil),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", nil),  // Teredo, public server and client (8.8.8.8)
        ("2001:200::1", nil),
    ]

    @Test(arguments: table)
    func classifiesAddress(_ text: String, _ expected: SpecialRange?) throws {
        // Given a textual address
        let address = try #require(IPAddress(text))
        // Then its range is the expected one, and the default policy refuses exactly those
        #expect(AddressPolicy.classify(address) == expected, "\(text)")
        #expect(AddressPolicy().refusal(for: address) == expected, "\(text)")
    }

    @Test func allowPrivateNetworksLiftsEveryRefusal() throws {
        let policy = AddressPolicy(allowPrivateNetworks: true)
        for (text, _) in Self.table {
            #expect(policy.refusal(for: try #require(IPAddress(text))) == nil, "\(text)")
        }
    }

    @Test func allowedNetworksExemptOnlyTheirBlock() throws {
        // Given an exception for 10.1.2.0/24 and for fd00::/8
        let policy = AddressPolicy(allowedNetworks: [
            try #require(IPNetwork("10.1.2.0/24")), try #require(IPNetwork("fd00::/8")),
        ])
        // Then addresses inside are allowed, their neighbours and other ranges are not
        #expect(policy.refusal(for: IPAddress("10.1.2.77")!) == nil)
        #expect(policy.refusal(for: IPAddress("::ffff:10.1.2.77")!) == nil)
        #expect(policy.refusal(for: IPAddress("10.1.3.1")!) == .privateNetwork)
        #expect(policy.refusal(for: IPAddress("127.0.0.1")!) == .loopback)
        #expect(policy.refusal(for: IPAddress("fd00::5")!) == nil)
        #expect(policy.refusal(for: IPAddress("fc00::5")!) == .uniqueLocal)
        #expect(policy.refusal(for: IPAddress("8.8.8.8")!) == nil)
    }

    @Test(arguments: [
        ("10.1.2.3/24", "10.1.2.0/24"), ("127.0.0.2", "127.0.0.2/32"), ("0.0.0.0/0", "0.0.0.0/0"),
        ("fd00::1/8", "fd00::/8"), ("::1", "::1/128"),
    ])
    func parsesNetworks(_ text: String, _ canonical: String) throws {
        #expect(try #require(IPNetwork(text)).description == canonical)
    }

    @Test(arguments: ["10.0.0.0/33", "::/129", "10.0.0/8", "example.com/8", "10.0.0.0/-1", "10.0.0.0/8/8", "", "127.1"])
    func rejectsBadNetworks(_ text: String) {
        #expect(IPNetwork(text) == nil)
    }

    @Test func printsAddresses() {
        #expect(IPAddress("::ffff:10.0.0.1")!.description == "::ffff:10.0.0.1")
        #expect(IPAddress("2001:DB8::1")!.description == "2001:db8::1")
        #expect(IPAddress("192.0.2.1")!.description == "192.0.2.1")
    }
}
