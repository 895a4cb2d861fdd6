import HTTPClient
import Testing

/// The address rule on its own: what a strict fetch may connect to, at the
/// edges of each refused range.
struct AddressRuleTests {
    @Test(arguments: [
        "10.0.0.0", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.0.0", "192.168.255.255",
        "127.0.0.1", "127.255.255.254", "169.254.0.1", "169.254.169.254", "100.64.0.0", "100.127.255.255",
        "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.255", "240.0.0.1", "255.255.255.255",
        "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "192.88.99.1",
    ])
    func refusesNonPublicIPv4(_ address: String) {
        #expect(!AddressRule.allows(address))
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0",
        "192.167.255.255", "192.169.0.0", "100.63.255.255", "100.128.0.0", "169.253.255.255", "169.255.0.0",
        "126.255.255.255", "128.0.0.0", "223.255.255.255", "198.17.255.255", "198.20.0.0", "1.0.0.0",
    ])
    func allowsPublicIPv4(_ address: String) {
        #expect(AddressRule.allows(address))
    }

    @Test(arguments: [
        "::", "::1", "fe80::1", "febf:ffff::1", "fec0::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1",
        "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::ffff:0.0.0.0", "::127.0.0.1",
        "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::1", "2002:c0a8:101::1", "2001:db8::1", "2001::1",
        "2001:1::1", "2001:2::1", "2001:1ff::1", "3fff::1", "3fff:fff::1", "100::1", "4000::1", "e000::1",
    ])
    func refusesNonPublicIPv6(_ address: String) {
        #expect(!AddressRule.allows(address))
    }

    @Test(arguments: [
        "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1", "3fff:1000::1", "2c0f:f000::1",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:db9::1", "2001:200::1",
    ])
    func allowsPublicIPv6(_ address: String) {
        #expect(AddressRule.allows(address))
    }

    @Test func byteFormsAgreeWithTheTextForm() {
        #expect(!AddressRule.allows(ipv4: [127, 0, 0, 1]))
        #expect(AddressRule.allows(ipv4: [8, 8, 8, 8]))
        #expect(!AddressRule.allows(ipv6: [UInt8](repeating: 0, count: 15) + [1]))
        #expect(!AddressRule.allows(ipv6: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 1]))
        #expect(AddressRule.allows(ipv6: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 8, 8, 4, 4]))
        // Wrong lengths are no address at all.
        #expect(!AddressRule.allows(ipv4: [8, 8, 8]))
        #expect(!AddressRule.allows(ipv6: [0x26, 0x06]))
    }

    @Test(arguments: ["", "localhost", "example.com", "1.2.3", "8.8.8.8.8", "[::1]", "::1%lo", "2130706433"])
    func textThatIsNoAddressLiteralIsRefused(_ text: String) {
        #expect(!AddressRule.allows(text))
    }
}
