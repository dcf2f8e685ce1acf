// aqmlab ns-3 reference: dumbbell with a configurable bottleneck queue disc.
//
//   S_0 --\                              /-- D_0
//   S_1 ---+-- R1 ==(bottleneck)==> R2 --+--- D_1
//   ...   /                              \   ...
//   U_0 -/   (optional UDP CBR sources)   \- V_0
//
// * Forward bottleneck (R1 -> R2): the queue under study (FIFO, RED, PIE, ...) is the
//   TrafficControl root queue disc of R1's device; that device's own
//   DropTailQueue<Packet> is shrunk to --devQueue packets (default 1) so the
//   qdisc holds the backlog.  No BQL (no QueueLimits object is installed).
// * Reverse bottleneck (R2 -> R1, ACKs) and all access links: no queue disc
//   (the default FqCoDel installed by Ipv4AddressHelper is removed), large
//   device drop-tail queues (--reverseQueueLimit / --accessQueueLimit).
//
// Output: one JSON object on stdout.  See README.md.
//
// Build: ./build.sh   (links against the ns-3 3.44 pip wheel)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <random>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// RedQueueDisc keeps its adapted max_p (m_curMaxP) private and offers no accessor or trace.
// An explicit template instantiation may name a private member (C++ [temp.spec]/6), which lets
// this program read it without touching ns-3: `g_qdisc->*Get(RedCurMaxP{})`.
template <typename Tag, typename Tag::type Member>
struct PrivateMemberReader
{
    friend typename Tag::type Get(Tag)
    {
        return Member;
    }
};

struct RedCurMaxP
{
    using type = double RedQueueDisc::*;
    friend type Get(RedCurMaxP);
};

template struct PrivateMemberReader<RedCurMaxP, &RedQueueDisc::m_curMaxP>;

// ---------------------------------------------------------------- helpers

std::vector<double>
ParseList(const std::string& s)
{
    std::vector<double> out;
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ','))
    {
        if (!tok.empty())
        {
            out.push_back(std::stod(tok));
        }
    }
    return out;
}

// Value i of a comma list; a single value applies to all; a list shorter
// than needed is an error.
double
ListAt(const std::vector<double>& v, uint32_t i, const char* name)
{
    if (v.empty())
    {
        NS_FATAL_ERROR("empty list for --" << name);
    }
    if (v.size() == 1)
    {
        return v[0];
    }
    if (i >= v.size())
    {
        NS_FATAL_ERROR("--" << name << " has " << v.size() << " values, need at least " << i + 1);
    }
    return v[i];
}

std::string
JsonEscape(const std::string& s)
{
    std::string o;
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
        }
        o += c;
    }
    return o;
}

std::string
TcpTypeName(std::string v)
{
    if (v.rfind("ns3::", 0) == 0)
    {
        return v;
    }
    return "ns3::Tcp" + v; // NewReno -> ns3::TcpNewReno, LinuxReno -> ns3::TcpLinuxReno
}

// ---------------------------------------------------------------- state

struct FlowStats
{
    bool isTcp{true};
    double startS{0};
    double stopS{0};
    double srcDelayMs{0};
    double dstDelayMs{0};
    Ptr<PacketSink> sink;
    Ptr<Application> app;
    uint64_t rxAtWarmup{0};
    // sender-side counters (TCP, from TcpSocketBase "Tx" trace; SYN excluded)
    uint64_t dataPktsSent{0};
    uint64_t dataBytesSent{0};
    uint64_t retxPkts{0};
    uint64_t retxPktsAfterWarmup{0};
    uint64_t dataPktsSentAfterWarmup{0};
    uint32_t highTx{0}; // highest (seq+len) sent, relative to first seq seen
    bool haveSeq{false};
    SequenceNumber32 isn;
    uint64_t fastRecoveries{0};
    uint64_t fastRecoveriesAfterWarmup{0};
    uint64_t rtoLoss{0};           // entries into CA_LOSS (a loss episode begun by an RTO)
    uint64_t rtoLossAfterWarmup{0};
    uint64_t rtoExpiries{0};       // every RTO expiry, backoffs included (see OnRto)
    uint64_t rtoExpiriesAfterWarmup{0};
    uint64_t retxTrace{0}; // ns-3 "Retransmission" trace count
    uint32_t lastCwnd{0};
    uint32_t lastSsthresh{0};
};

std::vector<FlowStats> g_flows;
double g_warmup = 10.0;
// --traceFlow=<id>: that flow's cwnd, ssthresh, congestion-state and RTO changes on stderr
// (for comparing a flow's window history with aqmlab's); -1 = none.
int32_t g_traceFlow = -1;

void
TraceLine(uint32_t id, const char* what, double value)
{
    if (static_cast<int32_t>(id) == g_traceFlow)
    {
        std::cerr << Simulator::Now().GetSeconds() << " " << what << " " << value << "\n";
    }
}

// --traceQueue: every bottleneck qdisc arrival on stderr as "<time> q <packets before> <enq|drop
// reason>", for comparing a queue's admission history with aqmlab's.
bool g_traceQueue = false;

void
OnQdiscEnqueue(Ptr<const QueueDiscItem> /*item*/);

// bottleneck measurement
Ptr<QueueDisc> g_qdisc;
Ptr<Queue<Packet>> g_devQueue;
Ptr<PointToPointNetDevice> g_bnDev;

// time-weighted qdisc occupancy (packets) from "PacketsInQueue" trace
struct TimeWeighted
{
    double lastT{0};
    double lastV{0};
    double area{0};
    double areaWarm{0};

    void Update(double t, double v)
    {
        double dt = t - lastT;
        area += lastV * dt;
        if (t > g_warmup)
        {
            double from = std::max(lastT, g_warmup);
            areaWarm += lastV * (t - from);
        }
        lastT = t;
        lastV = v;
    }
};

TimeWeighted g_twPkts;
TimeWeighted g_twBytes;

// sampled occupancy
struct Sampler
{
    uint64_t n{0}, nWarm{0};
    double sumQd{0}, sumQdWarm{0}, sumDev{0}, sumDevWarm{0}, sumQdBytesWarm{0};
    uint32_t maxQd{0};
} g_samp;

double g_sampleInterval = 0.01;
double g_duration = 60.0;

// bottleneck link bytes (PhyTxEnd, PPP frame bytes)
uint64_t g_bnTxBytes{0}, g_bnTxBytesWarm{0}, g_bnTxPkts{0}, g_bnTxPktsWarm{0};
std::map<uint32_t, uint64_t> g_sizeHist; // frame size -> count (bottleneck, forward)
std::map<uint32_t, uint64_t> g_revSizeHist; // reverse direction frame sizes

QueueDisc::Stats g_statsAtWarmup;
bool g_haveWarmStats = false;

// ---------------------------------------------------------------- callbacks

void
OnQdiscPackets(uint32_t /*oldV*/, uint32_t newV)
{
    g_twPkts.Update(Simulator::Now().GetSeconds(), newV);
}

void
OnQdiscEnqueue(Ptr<const QueueDiscItem> /*item*/)
{
    std::cerr << Simulator::Now().GetSeconds() << " q " << g_qdisc->GetNPackets() - 1 << " enq\n";
}

void
OnQdiscDropBeforeEnqueue(Ptr<const QueueDiscItem> /*item*/, const char* reason)
{
    std::cerr << Simulator::Now().GetSeconds() << " q " << g_qdisc->GetNPackets() << " drop " << reason << "\n";
}

void
OnQdiscBytes(uint32_t /*oldV*/, uint32_t newV)
{
    g_twBytes.Update(Simulator::Now().GetSeconds(), newV);
}

// COBALT's BLUE after the warm-up (--queue=cobalt | fq_cobalt): per sample, the largest p_drop over
// the COBALT queues and how many have p_drop > 0, to see whether BLUE acts.
struct CobaltPdropSamples
{
    uint32_t n = 0;             // samples taken
    uint32_t nActive = 0;       // samples with some queue's p_drop > 0
    double maxSeen = 0;         // largest p_drop seen
    double sumMax = 0;          // sum over samples of the largest p_drop
    uint64_t sumActiveQueues = 0; // sum over samples of the queues with p_drop > 0
} g_cobaltPdrop;

void
SampleCobaltPdrop()
{
    std::vector<Ptr<CobaltQueueDisc>> qs;
    if (auto c = DynamicCast<CobaltQueueDisc>(g_qdisc))
    {
        qs.push_back(c);
    }
    else if (DynamicCast<FqCobaltQueueDisc>(g_qdisc))
    {
        for (std::size_t i = 0; i < g_qdisc->GetNQueueDiscClasses(); ++i)
        {
            qs.push_back(DynamicCast<CobaltQueueDisc>(g_qdisc->GetQueueDiscClass(i)->GetQueueDisc()));
        }
    }
    else
    {
        return;
    }
    double mx = 0;
    uint32_t active = 0;
    for (auto& c : qs)
    {
        if (c && c->GetPdrop() > 0)
        {
            mx = std::max(mx, c->GetPdrop());
            active++;
        }
    }
    g_cobaltPdrop.n++;
    g_cobaltPdrop.nActive += active > 0;
    g_cobaltPdrop.maxSeen = std::max(g_cobaltPdrop.maxSeen, mx);
    g_cobaltPdrop.sumMax += mx;
    g_cobaltPdrop.sumActiveQueues += active;
}

void
Sample()
{
    double t = Simulator::Now().GetSeconds();
    uint32_t qd = g_qdisc->GetNPackets();
    uint32_t qdb = g_qdisc->GetNBytes();
    uint32_t dv = g_devQueue->GetNPackets();
    g_samp.n++;
    g_samp.sumQd += qd;
    g_samp.sumDev += dv;
    g_samp.maxQd = std::max(g_samp.maxQd, qd);
    if (t >= g_warmup)
    {
        g_samp.nWarm++;
        g_samp.sumQdWarm += qd;
        g_samp.sumDevWarm += dv;
        g_samp.sumQdBytesWarm += qdb;
    }
    if (t >= g_warmup)
    {
        SampleCobaltPdrop();
    }
    if (t + g_sampleInterval < g_duration - 1e-9)
    {
        Simulator::Schedule(Seconds(g_sampleInterval), &Sample);
    }
}

void
OnBnPhyTxEnd(Ptr<const Packet> p)
{
    uint32_t sz = p->GetSize();
    g_bnTxBytes += sz;
    g_bnTxPkts++;
    if (Simulator::Now().GetSeconds() >= g_warmup)
    {
        g_bnTxBytesWarm += sz;
        g_bnTxPktsWarm++;
    }
    g_sizeHist[sz]++;
}

void
OnRevPhyTxEnd(Ptr<const Packet> p)
{
    g_revSizeHist[p->GetSize()]++;
}

void
OnTcpTx(uint32_t id, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return; // pure ACK / SYN / FIN without data
    }
    FlowStats& f = g_flows[id];
    if (!f.haveSeq)
    {
        f.haveSeq = true;
        f.isn = h.GetSequenceNumber();
    }
    uint32_t rel = h.GetSequenceNumber() - f.isn;
    bool warm = Simulator::Now().GetSeconds() >= g_warmup;
    f.dataPktsSent++;
    f.dataBytesSent += len;
    if (warm)
    {
        f.dataPktsSentAfterWarmup++;
    }
    if (rel + len <= f.highTx)
    {
        f.retxPkts++;
        if (warm)
        {
            f.retxPktsAfterWarmup++;
        }
    }
    else
    {
        f.highTx = rel + len;
    }
}

void
OnTcpRetx(uint32_t id,
          Ptr<const Packet>,
          const TcpHeader&,
          const Address&,
          const Address&,
          Ptr<const TcpSocketBase>)
{
    g_flows[id].retxTrace++;
}

void
OnCongState(uint32_t id, TcpSocketState::TcpCongState_t oldV, TcpSocketState::TcpCongState_t newV)
{
    TraceLine(id, "state", newV);
    bool warm = Simulator::Now().GetSeconds() >= g_warmup;
    if (newV == TcpSocketState::CA_RECOVERY && oldV != TcpSocketState::CA_RECOVERY)
    {
        g_flows[id].fastRecoveries++;
        g_flows[id].fastRecoveriesAfterWarmup += warm;
    }
    if (newV == TcpSocketState::CA_LOSS && oldV != TcpSocketState::CA_LOSS)
    {
        g_flows[id].rtoLoss++;
        g_flows[id].rtoLossAfterWarmup += warm;
    }
}

// Counts RTO expiries. ns-3 has no trace for the expiry itself, but TcpSocketBase::ReTxTimeout
// (and nothing else) doubles the traced RTO, `m_rto = Min(2 * m_rto, 60 s)`, before
// retransmitting; an RTT sample sets it to max(SRTT + max(G, 4 RTTVAR), MinRto), which equals
// exactly twice the previous value (to the nanosecond) only by coincidence. A CongState change
// cannot count expiries: repeated expiries (backoffs) stay in CA_LOSS and do not fire it.
void
OnRto(uint32_t id, Time oldV, Time newV)
{
    TraceLine(id, "rto", newV.GetSeconds());
    if (newV == oldV + oldV || (newV == Seconds(60) && oldV >= Seconds(30) && newV != oldV))
    {
        g_flows[id].rtoExpiries++;
        g_flows[id].rtoExpiriesAfterWarmup += Simulator::Now().GetSeconds() >= g_warmup;
    }
}

void
OnCwnd(uint32_t id, uint32_t, uint32_t v)
{
    g_flows[id].lastCwnd = v;
    TraceLine(id, "cwnd", v);
}

void
OnSsthresh(uint32_t id, uint32_t, uint32_t v)
{
    g_flows[id].lastSsthresh = v;
    TraceLine(id, "ssthresh", v);
}

// Called just after BulkSendApplication::StartApplication created the socket.
void
HookTcp(uint32_t id)
{
    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(g_flows[id].app);
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        std::cerr << "warning: flow " << id << " has no socket yet" << std::endl;
        return;
    }
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTcpTx, id));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnTcpRetx, id));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, id));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, id));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, id));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, id));
}

void
WarmupSnapshot()
{
    for (auto& f : g_flows)
    {
        f.rxAtWarmup = f.sink->GetTotalRx();
    }
    g_statsAtWarmup = g_qdisc->GetStats();
    g_haveWarmStats = true;
}

// RED's current max_p, sampled every 100 ms after the warm-up (Adaptive RED moves it).
std::vector<double> g_redMaxPSamples;

double
RedCurrentMaxP()
{
    Ptr<RedQueueDisc> red = DynamicCast<RedQueueDisc>(g_qdisc);
    return PeekPointer(red)->*Get(RedCurMaxP{});
}

void
SampleRedMaxP()
{
    g_redMaxPSamples.push_back(RedCurrentMaxP());
    Simulator::Schedule(MilliSeconds(100), &SampleRedMaxP);
}

// ---------------------------------------------------------------- JSON out

void
PrintDropMap(std::ostream& o, const std::map<std::string, uint32_t, std::less<>>& m)
{
    o << "{";
    bool first = true;
    for (const auto& [k, v] : m)
    {
        o << (first ? "" : ", ") << "\"" << JsonEscape(k) << "\": " << v;
        first = false;
    }
    o << "}";
}

// FqPieQueueDisc's queues are child PieQueueDiscs: their drops reach the parent's statistics with
// QueueDisc::CHILD_QUEUE_DISC_DROP before the child's reason.
const std::string kChildPieUnforced =
    std::string(QueueDisc::CHILD_QUEUE_DISC_DROP) + PieQueueDisc::UNFORCED_DROP;
// Likewise FqCobaltQueueDisc's child CobaltQueueDiscs: COBALT's drops at dequeue, and a child's
// refusal of an arrival when that one queue holds MaxSize packets.
const std::string kChildCobaltTarget =
    std::string(QueueDisc::CHILD_QUEUE_DISC_DROP) + CobaltQueueDisc::TARGET_EXCEEDED_DROP;
const std::string kChildCobaltOverlimit =
    std::string(QueueDisc::CHILD_QUEUE_DISC_DROP) + CobaltQueueDisc::OVERLIMIT_DROP;

uint32_t
MapGet(const std::map<std::string, uint32_t, std::less<>>& m, const char* k)
{
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
}

template <class M>
void
PrintHist(std::ostream& o, const M& m)
{
    // frame sizes, most frequent first, top 12
    std::vector<std::pair<uint64_t, uint32_t>> v;
    for (const auto& [sz, n] : m)
    {
        v.emplace_back(n, sz);
    }
    std::sort(v.rbegin(), v.rend());
    o << "{";
    for (size_t i = 0; i < v.size() && i < 12; ++i)
    {
        o << (i ? ", " : "") << "\"" << v[i].second << "\": " << v[i].first;
    }
    o << "}";
}

// ---------------------------------------------------------------- rate schedule

// --rateChanges: at each time t the DataRate of both bottleneck devices (R1->R2 and R2->R1)
// becomes the given rate. PointToPointNetDevice computes a packet's transmission time when the
// transmission starts (TransmitStart), so a packet already on the wire keeps its old rate.
struct RateChange
{
    double t;
    DataRate rate;
};

// Parses "t:rate,t:rate,..." (t in seconds, rate an ns-3 DataRate string). Returns false with a
// message in `err` on bad input (rather than aborting inside ns-3's DataRate parser).
bool
ParseRateChanges(const std::string& s, double duration, std::vector<RateChange>& out, std::string& err)
{
    out.clear();
    if (s.empty())
    {
        return true;
    }
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ','))
    {
        auto colon = tok.find(':');
        if (tok.empty() || colon == std::string::npos || tok.find(':', colon + 1) != std::string::npos)
        {
            err = "entry '" + tok + "' is not of the form <time s>:<rate>, e.g. 20:4Mbps";
            return false;
        }
        std::string ts = tok.substr(0, colon);
        std::string rs = tok.substr(colon + 1);
        char* end = nullptr;
        double t = ts.empty() ? NAN : std::strtod(ts.c_str(), &end);
        if (ts.empty() || end != ts.c_str() + ts.size() || !std::isfinite(t) || t < 0)
        {
            err = "entry '" + tok + "': time '" + ts + "' is not a finite number of seconds >= 0";
            return false;
        }
        if (t > duration)
        {
            err = "entry '" + tok + "': time " + ts + " s is after the end of the run (--duration)";
            return false;
        }
        if (!out.empty() && t <= out.back().t)
        {
            err = "entry '" + tok + "': times must be strictly increasing";
            return false;
        }
        DataRate rate;
        std::istringstream rin(rs);
        rin >> rate;
        if (rs.empty() || rin.fail())
        {
            err = "entry '" + tok + "': rate '" + rs + "' is not an ns-3 DataRate (e.g. 4Mbps, 4000000bps)";
            return false;
        }
        if (rate.GetBitRate() == 0)
        {
            err = "entry '" + tok + "': a rate of 0 (a link outage) cannot be expressed with "
                  "PointToPointNetDevice";
            return false;
        }
        out.push_back({t, rate});
    }
    return true;
}

void
SetBottleneckRate(Ptr<PointToPointNetDevice> fwd, Ptr<PointToPointNetDevice> rev, DataRate rate)
{
    fwd->SetDataRate(rate);
    rev->SetDataRate(rate);
}

// Goodput per phase of the rate schedule: cumulative TCP sink bytes and bottleneck frame bytes
// at each phase boundary (0, the warm-up and every change time).
struct PhaseSnapshot
{
    double t;
    uint64_t tcpRxBytes;
    uint64_t frameBytes;
};

std::vector<PhaseSnapshot> g_phaseSnaps;

uint64_t
TcpRxBytesNow()
{
    uint64_t b = 0;
    for (const auto& f : g_flows)
    {
        if (f.isTcp)
        {
            b += f.sink->GetTotalRx();
        }
    }
    return b;
}

void
PhaseSnapshotNow()
{
    g_phaseSnaps.push_back({Simulator::Now().GetSeconds(), TcpRxBytesNow(), g_bnTxBytes});
}

} // namespace

int
main(int argc, char* argv[])
{
    // ------------------------------------------------------------ options
    uint32_t nFlows = 10;
    std::string bottleneckRate = "10Mbps";
    double bottleneckDelayMs = 20;
    std::string accessRate = "100Mbps";
    std::string accessDelays = "1";   // ms, sender side, comma list or single value
    std::string rxAccessDelays = "1"; // ms, receiver side
    std::string queue = "red";        // red | fifo | pie
    uint32_t queueLimit = 100;        // packets
    uint32_t devQueue = 1;            // packets in the bottleneck NetDevice queue
    uint32_t reverseQueueLimit = 10000;
    uint32_t accessQueueLimit = 10000;
    double redMinTh = 5;
    double redMaxTh = 15;
    double redMaxP = 0.1;
    double redQW = 0.002;
    bool redGentle = false;
    bool redWait = true;
    bool redHardDrop = true;
    uint32_t redMeanPktSize = 0; // 0 => MSS + 20 (IP) + TCP header (incl. options)
    bool redNs1Compat = false;
    // Adaptive RED (RedQueueDisc's own defaults unless set).
    bool redAred = false;
    bool redAdaptMaxP = false;
    bool redFengAdaptive = false;
    bool redNonlinear = false;
    double redTargetDelayMs = 5;
    double redIntervalMs = 500;
    double redAlpha = 0.01;
    double redBeta = 0.9;
    double redTop = 0.5;
    double redBottom = 0.0;
    double redRttMs = 100;

    std::string tcpVariant = "NewReno";
    std::string recovery = "classic"; // classic | prr
    uint32_t mss = 1448;
    uint32_t delAckCount = 2;
    double delAckTimeoutMs = 200;
    uint32_t initCwnd = 10;
    uint32_t initSsthresh = UINT32_MAX;
    double minRtoMs = 1000;
    double connTimeoutMs = 3000;
    double rttInitialMs = 1000;
    double clockGranularityMs = 1;
    bool sack = true;
    bool timestamps = true;
    bool windowScaling = true;
    bool limitedTransmit = true;
    uint32_t dupAckThresh = 3;
    uint32_t sndBuf = 16 * 1024 * 1024;
    uint32_t rcvBuf = 16 * 1024 * 1024;
    uint32_t sendSize = 0; // BulkSend write size, 0 => MSS

    std::string startMode = "same"; // same | uniform | list
    double startTime = 0.0;
    double startSpread = 1.0;
    std::string startTimes = "";
    uint32_t startSeed = 1;
    double duration = 60.0;
    double warmup = 10.0;
    uint32_t seed = 1;
    uint32_t run = 1;
    double sampleMs = 10.0;
    std::string pcapPrefix;

    uint32_t nUdp = 0;
    std::string udpRate = "3Mbps";
    uint32_t udpPktSize = 1000;
    double udpStart = 0.0;
    double udpStop = -1; // <0 => duration
    double udpAccessDelayMs = 1;
    std::string rateChanges; // "t:rate,..." (empty: the bottleneck keeps bottleneckRate)
    std::string tcpPerFlow;  // "NewReno,Ledbat,..." (empty: every flow --tcp)

    CommandLine cmd(__FILE__);
    cmd.AddValue("nFlows", "number of TCP flows", nFlows);
    cmd.AddValue("traceQueue", "print every bottleneck qdisc arrival (queue length, enqueue or drop reason) on stderr", g_traceQueue);
    cmd.AddValue("traceFlow", "print this flow's cwnd/ssthresh/state/RTO changes on stderr (-1: none)", g_traceFlow);
    cmd.AddValue("bottleneckRate", "bottleneck rate (ns-3 DataRate string)", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way propagation delay [ms]", bottleneckDelayMs);
    cmd.AddValue("accessRate", "access link rate (all access links)", accessRate);
    cmd.AddValue("accessDelays",
                 "sender-side access delays [ms], one value or comma list (one per TCP flow)",
                 accessDelays);
    cmd.AddValue("rxAccessDelays",
                 "receiver-side access delays [ms], one value or comma list",
                 rxAccessDelays);
    cmd.AddValue("queue", "bottleneck queue disc: red | fifo | codel | fq_codel | pie | fq_pie | cobalt | fq_cobalt", queue);
    cmd.AddValue("queueLimit", "bottleneck qdisc limit [packets]", queueLimit);
    cmd.AddValue("devQueue", "bottleneck NetDevice queue size [packets] (>=1)", devQueue);
    cmd.AddValue("reverseQueueLimit", "R2->R1 device drop-tail limit [packets]", reverseQueueLimit);
    cmd.AddValue("accessQueueLimit", "access-link device drop-tail limit [packets]", accessQueueLimit);
    cmd.AddValue("redMinTh", "RED min_th [packets]", redMinTh);
    cmd.AddValue("redMaxTh", "RED max_th [packets]", redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p (ns-3 LInterm = 1/max_p)", redMaxP);
    cmd.AddValue("redQW", "RED queue weight w_q", redQW);
    cmd.AddValue("redGentle", "RED gentle mode", redGentle);
    cmd.AddValue("redWait", "RED wait between drops (count-based)", redWait);
    cmd.AddValue("redHardDrop", "RED UseHardDrop (always drop when avg >= max_th)", redHardDrop);
    cmd.AddValue("redMeanPktSize", "RED MeanPktSize [bytes]; 0 = full data packet IP size", redMeanPktSize);
    cmd.AddValue("redNs1Compat", "RED Ns1Compat", redNs1Compat);
    cmd.AddValue("redAred", "RED ARED (automatic MinTh/MaxTh/QW, AdaptMaxP on)", redAred);
    cmd.AddValue("redAdaptMaxP", "RED AdaptMaxP (adapt max_p only)", redAdaptMaxP);
    cmd.AddValue("redFengAdaptive", "RED FengAdaptive", redFengAdaptive);
    cmd.AddValue("redNonlinear", "RED NLRED (Nonlinear RED: 1.5*max_p*x^2 below MaxTh)", redNonlinear);
    cmd.AddValue("redTargetDelay", "RED TargetDelay [ms] (automatic MinTh)", redTargetDelayMs);
    cmd.AddValue("redInterval", "RED Interval [ms] between max_p updates", redIntervalMs);
    cmd.AddValue("redAlpha", "RED Alpha (ARED increment)", redAlpha);
    cmd.AddValue("redBeta", "RED Beta (ARED decrease factor)", redBeta);
    cmd.AddValue("redTop", "RED Top (ARED upper bound of max_p)", redTop);
    cmd.AddValue("redBottom", "RED Bottom (ARED lower bound; 0 = automatic)", redBottom);
    cmd.AddValue("redRtt", "RED Rtt [ms] for the automatic Bottom", redRttMs);

    cmd.AddValue("tcp", "TCP variant: NewReno, LinuxReno, Cubic, ... or full ns3::TypeId", tcpVariant);
    cmd.AddValue("tcpPerFlow",
                 "comma list of TCP variants, one per TCP flow (as --tcp), overriding --tcp for "
                 "each flow's sender node (TcpL4Protocol::SocketType of that node); empty: all --tcp",
                 tcpPerFlow);
    cmd.AddValue("recovery", "loss recovery: classic (RFC 6582 NewReno) | prr (ns-3 default)", recovery);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("delAckCount", "delayed ACK count (1 = ACK every segment)", delAckCount);
    cmd.AddValue("delAckTimeout", "delayed ACK timeout [ms]", delAckTimeoutMs);
    cmd.AddValue("initCwnd", "initial cwnd [segments]", initCwnd);
    cmd.AddValue("initSsthresh", "initial ssthresh [bytes]", initSsthresh);
    cmd.AddValue("minRto", "minimum RTO [ms]", minRtoMs);
    cmd.AddValue("connTimeout", "SYN retransmission timeout (initial RTO for the handshake) [ms]", connTimeoutMs);
    cmd.AddValue("rttInitial", "RttEstimator initial estimate [ms]", rttInitialMs);
    cmd.AddValue("clockGranularity", "RTO clock granularity G [ms]", clockGranularityMs);
    cmd.AddValue("sack", "TCP SACK option", sack);
    cmd.AddValue("timestamps", "TCP timestamp option", timestamps);
    cmd.AddValue("windowScaling", "TCP window scaling option", windowScaling);
    cmd.AddValue("limitedTransmit", "RFC 3042 limited transmit", limitedTransmit);
    cmd.AddValue("dupAckThresh", "dupACK threshold for fast retransmit", dupAckThresh);
    cmd.AddValue("sndBuf", "TCP send buffer [bytes]", sndBuf);
    cmd.AddValue("rcvBuf", "TCP receive buffer [bytes] (caps the advertised window)", rcvBuf);
    cmd.AddValue("sendSize", "BulkSend write size [bytes], 0 = MSS", sendSize);

    cmd.AddValue("startMode", "same | uniform | list", startMode);
    cmd.AddValue("startTime", "start time for startMode=same [s]", startTime);
    cmd.AddValue("startSpread", "S for startMode=uniform: starts ~ U[0,S] [s]", startSpread);
    cmd.AddValue("startTimes", "comma list of start times [s] for startMode=list", startTimes);
    cmd.AddValue("startSeed", "seed for startMode=uniform (std::mt19937_64)", startSeed);
    cmd.AddValue("duration", "simulated time [s]", duration);
    cmd.AddValue("warmup", "warm-up [s] excluded from goodput / queue averages", warmup);
    cmd.AddValue("seed", "ns-3 RngSeed (RED's random drops)", seed);
    cmd.AddValue("run", "ns-3 RngRun", run);
    cmd.AddValue("sampleMs", "queue sampling interval [ms]", sampleMs);
    cmd.AddValue("pcap",
                 "if set, write the bottleneck device (R1 side) to <pcap>-<node>-<device>.pcap",
                 pcapPrefix);

    cmd.AddValue("nUdp", "number of UDP CBR flows", nUdp);
    cmd.AddValue("udpRate", "UDP CBR rate per flow", udpRate);
    cmd.AddValue("udpPktSize", "UDP payload bytes per packet", udpPktSize);
    cmd.AddValue("udpStart", "UDP start [s]", udpStart);
    cmd.AddValue("udpStop", "UDP stop [s] (<0 = duration)", udpStop);
    cmd.AddValue("udpAccessDelay", "UDP sender/receiver access delay [ms]", udpAccessDelayMs);
    cmd.AddValue("rateChanges",
                 "bottleneck rate schedule: comma list of t:rate (t in s, rate an ns-3 DataRate "
                 "string, e.g. 20:4Mbps,40:10Mbps); each sets the DataRate of both bottleneck "
                 "devices (R1->R2 and R2->R1) at time t. Empty: none",
                 rateChanges);
    cmd.Parse(argc, argv);

    std::vector<RateChange> rateSchedule;
    {
        std::string err;
        if (!ParseRateChanges(rateChanges, duration, rateSchedule, err))
        {
            std::cerr << "error: --rateChanges=" << rateChanges << ": " << err << std::endl;
            return 1;
        }
    }

    if (devQueue < 1)
    {
        NS_FATAL_ERROR("--devQueue must be >= 1");
    }
    if (udpStop < 0)
    {
        udpStop = duration;
    }
    g_warmup = warmup;
    g_duration = duration;
    g_sampleInterval = sampleMs / 1000.0;
    if (sendSize == 0)
    {
        sendSize = mss;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // ------------------------------------------------------------ TCP defaults
    std::string tcpType = TcpTypeName(tcpVariant);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(tcpType)));
    std::string recoveryType;
    if (recovery == "classic")
    {
        recoveryType = "ns3::TcpClassicRecovery";
    }
    else if (recovery == "prr")
    {
        recoveryType = "ns3::TcpPrrRecovery";
    }
    else
    {
        NS_FATAL_ERROR("--recovery must be classic or prr");
    }
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName(recoveryType)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(delAckTimeoutMs)));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(initSsthresh));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MilliSeconds(connTimeoutMs)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(MilliSeconds(clockGranularityMs)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupAckThresh));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("Off"));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(MilliSeconds(rttInitialMs)));

    // Header bytes as ns-3 serializes them
    const uint32_t ipHdr = 20;
    const uint32_t tcpBase = 20;
    const uint32_t tsOpt = timestamps ? 12 : 0; // 10 B TS option + 2 B padding (NOPs)
    const uint32_t tcpHdrData = tcpBase + tsOpt;
    const uint32_t pppHdr = 2;
    const uint32_t dataIpBytes = mss + ipHdr + tcpHdrData;
    if (dataIpBytes > 1500)
    {
        std::cerr << "warning: MSS " << mss << " + headers = " << dataIpBytes
                  << " > MTU 1500: ns-3 will fragment at IP" << std::endl;
    }
    if (redMeanPktSize == 0)
    {
        redMeanPktSize = dataIpBytes;
    }

    // ------------------------------------------------------------ topology
    uint32_t nSrc = nFlows + nUdp;
    NodeContainer senders;
    senders.Create(nSrc);
    NodeContainer receivers;
    receivers.Create(nSrc);
    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    InternetStackHelper stack;
    stack.InstallAll();

    // --tcpPerFlow: each TCP flow's sender node gets its own SocketType (the receivers keep --tcp,
    // which only matters to a sender).
    std::vector<std::string> flowTcpTypes(nFlows, tcpType);
    if (!tcpPerFlow.empty())
    {
        std::vector<std::string> names;
        std::stringstream ss(tcpPerFlow);
        std::string item;
        while (std::getline(ss, item, ','))
        {
            names.push_back(item);
        }
        if (names.size() != nFlows)
        {
            std::cerr << "error: --tcpPerFlow=" << tcpPerFlow << ": needs one variant per TCP flow ("
                      << nFlows << "), got " << names.size() << std::endl;
            return 1;
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            flowTcpTypes[i] = TcpTypeName(names[i]);
            senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute(
                "SocketType",
                TypeIdValue(TypeId::LookupByName(flowTcpTypes[i])));
        }
    }

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, accessQueueLimit)));

    PointToPointHelper bneck;
    bneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(bottleneckDelayMs)));
    bneck.SetQueue("ns3::DropTailQueue<Packet>",
                   "MaxSize",
                   QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, reverseQueueLimit)));
    NetDeviceContainer bnDevs = bneck.Install(r1, r2);
    g_bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    if (!pcapPrefix.empty())
    {
        bneck.EnablePcap(pcapPrefix, bnDevs.Get(0), false, true);
    }
    g_devQueue = g_bnDev->GetQueue();
    g_devQueue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, devQueue));
    Ptr<PointToPointNetDevice> revDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(1));

    std::vector<double> sDel = ParseList(accessDelays);
    std::vector<double> rDel = ParseList(rxAccessDelays);
    std::vector<NetDeviceContainer> srcDevs(nSrc), dstDevs(nSrc);
    g_flows.resize(nSrc);
    for (uint32_t i = 0; i < nSrc; ++i)
    {
        bool tcp = i < nFlows;
        double ds = tcp ? ListAt(sDel, i, "accessDelays") : udpAccessDelayMs;
        double dr = tcp ? ListAt(rDel, i, "rxAccessDelays") : udpAccessDelayMs;
        g_flows[i].isTcp = tcp;
        g_flows[i].srcDelayMs = ds;
        g_flows[i].dstDelayMs = dr;
        access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(ds)));
        srcDevs[i] = access.Install(senders.Get(i), r1);
        access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(dr)));
        dstDevs[i] = access.Install(r2, receivers.Get(i));
    }

    // Queue disc under study on R1's bottleneck device (installed before
    // address assignment so Ipv4AddressHelper does not add its default).
    TrafficControlHelper tch;
    if (queue == "red")
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queueLimit)),
                             "MinTh", DoubleValue(redMinTh),
                             "MaxTh", DoubleValue(redMaxTh),
                             "LInterm", DoubleValue(1.0 / redMaxP),
                             "QW", DoubleValue(redQW),
                             "Gentle", BooleanValue(redGentle),
                             "Wait", BooleanValue(redWait),
                             "UseHardDrop", BooleanValue(redHardDrop),
                             "MeanPktSize", UintegerValue(redMeanPktSize),
                             "Ns1Compat", BooleanValue(redNs1Compat),
                             "UseEcn", BooleanValue(false),
                             "ARED", BooleanValue(redAred),
                             "AdaptMaxP", BooleanValue(redAdaptMaxP),
                             "FengAdaptive", BooleanValue(redFengAdaptive),
                             "NLRED", BooleanValue(redNonlinear),
                             "TargetDelay", TimeValue(MicroSeconds(int64_t(redTargetDelayMs * 1000))),
                             "Interval", TimeValue(MicroSeconds(int64_t(redIntervalMs * 1000))),
                             "Alpha", DoubleValue(redAlpha),
                             "Beta", DoubleValue(redBeta),
                             "Top", DoubleValue(redTop),
                             "Bottom", DoubleValue(redBottom),
                             "Rtt", TimeValue(MicroSeconds(int64_t(redRttMs * 1000))),
                             "LinkBandwidth", DataRateValue(DataRate(bottleneckRate)),
                             "LinkDelay", TimeValue(MilliSeconds(bottleneckDelayMs)));
    }
    else
    {
        // The others at ns-3's own defaults; only the limit comes from the command line.
        // CoDel: Target 5 ms, Interval 100 ms, MinBytes 1500, no ECN. FQ-CoDel: 1024 queues,
        // quantum = the device MTU (1500), batches of 64, perturbation 0, ECN on (the TCP flows
        // are not ECN-capable, so CoDel drops). PIE: Tupdate 15 ms, QueueDelayReference 15 ms,
        // MaxBurstAllowance 150 ms, A 0.125, B 1.25, no dequeue-rate estimator, no ECN, no
        // derandomization. FQ-PIE: 1024 queues, quantum = the device MTU (1500), batches of 64,
        // perturbation 0, UseEcn true with MarkEcnThreshold 0.1 (the TCP flows are not ECN-capable,
        // so PIE drops); each queue a PieQueueDisc with the PIE defaults above. COBALT: Target
        // 5 ms, Interval 100 ms, UseEcn false, Increment 1/256, Decrement 1/4096, BlueThreshold
        // 400 ms, CeThreshold none. FQ-COBALT: 1024 queues, quantum = the device MTU (1500),
        // batches of 64, perturbation 0, no set-associative hash, UseEcn true (the TCP flows are
        // not ECN-capable, so COBALT drops); each queue a CobaltQueueDisc with the defaults above.
        const std::map<std::string, std::string> limitOnly = {
            {"fifo", "ns3::FifoQueueDisc"},
            {"codel", "ns3::CoDelQueueDisc"},
            {"fq_codel", "ns3::FqCoDelQueueDisc"},
            {"pie", "ns3::PieQueueDisc"},
            {"fq_pie", "ns3::FqPieQueueDisc"},
            {"cobalt", "ns3::CobaltQueueDisc"},
            {"fq_cobalt", "ns3::FqCobaltQueueDisc"},
        };
        auto it = limitOnly.find(queue);
        if (it == limitOnly.end())
        {
            NS_FATAL_ERROR("--queue must be red, fifo, codel, fq_codel, pie, fq_pie, cobalt or fq_cobalt");
        }
        tch.SetRootQueueDisc(it->second,
                             "MaxSize",
                             QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queueLimit)));
    }
    QueueDiscContainer qdiscs = tch.Install(bnDevs.Get(0));
    g_qdisc = qdiscs.Get(0);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(bnDevs);
    std::vector<Ipv4InterfaceContainer> dstIf(nSrc);
    for (uint32_t i = 0; i < nSrc; ++i)
    {
        // One /24 per access link: senders in 10.1.0.0 upwards, receivers in 11.0.0.0 upwards,
        // so up to 65,000 flows get distinct networks.
        std::ostringstream a, b;
        a << "10." << (1 + i / 256) << "." << (i % 256) << ".0";
        b << "11." << (i / 256) << "." << (i % 256) << ".0";
        addr.SetBase(a.str().c_str(), "255.255.255.0");
        addr.Assign(srcDevs[i]);
        addr.SetBase(b.str().c_str(), "255.255.255.0");
        dstIf[i] = addr.Assign(dstDevs[i]);
    }
    // Remove the default FqCoDel root qdisc everywhere except the bottleneck
    {
        TrafficControlHelper un;
        un.Uninstall(bnDevs.Get(1));
        for (uint32_t i = 0; i < nSrc; ++i)
        {
            un.Uninstall(srcDevs[i]);
            un.Uninstall(dstDevs[i]);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Sanity check: exactly one root queue disc in the whole topology.
    uint32_t nRootQdiscs = 0;
    for (auto it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        Ptr<TrafficControlLayer> tc = (*it)->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < (*it)->GetNDevices(); ++d)
        {
            if (tc && tc->GetRootQueueDiscOnDevice((*it)->GetDevice(d)))
            {
                nRootQdiscs++;
            }
        }
    }
    if (nRootQdiscs != 1)
    {
        NS_FATAL_ERROR("expected 1 root queue disc, found " << nRootQdiscs);
    }

    // ------------------------------------------------------------ start times
    std::vector<double> starts(nFlows, startTime);
    if (startMode == "uniform")
    {
        std::mt19937_64 gen(startSeed);
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            // 53-bit uniform in [0,1) computed explicitly (portable)
            double u = (gen() >> 11) * (1.0 / 9007199254740992.0);
            starts[i] = u * startSpread;
        }
    }
    else if (startMode == "list")
    {
        std::vector<double> l = ParseList(startTimes);
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            starts[i] = ListAt(l, i, "startTimes");
        }
    }
    else if (startMode != "same")
    {
        NS_FATAL_ERROR("--startMode must be same, uniform or list");
    }

    // ------------------------------------------------------------ apps
    const uint16_t basePort = 5000;
    for (uint32_t i = 0; i < nSrc; ++i)
    {
        uint16_t port = basePort + i;
        Address sinkAddr(InetSocketAddress(dstIf[i].GetAddress(1), port));
        bool tcp = g_flows[i].isTcp;
        PacketSinkHelper sinkH(tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory",
                               InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkH.Install(receivers.Get(i));
        sa.Start(Seconds(0.0));
        sa.Stop(Seconds(duration + 1));
        g_flows[i].sink = DynamicCast<PacketSink>(sa.Get(0));
        if (tcp)
        {
            BulkSendHelper bs("ns3::TcpSocketFactory", sinkAddr);
            bs.SetAttribute("MaxBytes", UintegerValue(0));
            bs.SetAttribute("SendSize", UintegerValue(sendSize));
            ApplicationContainer ca = bs.Install(senders.Get(i));
            ca.Start(Seconds(starts[i]));
            ca.Stop(Seconds(duration));
            g_flows[i].app = ca.Get(0);
            g_flows[i].startS = starts[i];
            g_flows[i].stopS = duration;
            Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(1), &HookTcp, i);
        }
        else
        {
            OnOffHelper oo("ns3::UdpSocketFactory", sinkAddr);
            oo.SetAttribute("DataRate", DataRateValue(DataRate(udpRate)));
            oo.SetAttribute("PacketSize", UintegerValue(udpPktSize));
            oo.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1e9]"));
            oo.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
            ApplicationContainer ca = oo.Install(senders.Get(i));
            ca.Start(Seconds(udpStart));
            ca.Stop(Seconds(udpStop));
            g_flows[i].app = ca.Get(0);
            g_flows[i].startS = udpStart;
            g_flows[i].stopS = udpStop;
        }
    }

    // ------------------------------------------------------------ measurement
    g_qdisc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQdiscPackets));
    if (g_traceQueue)
    {
        g_qdisc->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnQdiscEnqueue));
        g_qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnQdiscDropBeforeEnqueue));
    }
    g_qdisc->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&OnQdiscBytes));
    g_bnDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBnPhyTxEnd));
    revDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnRevPhyTxEnd));
    Simulator::Schedule(Seconds(0), &Sample);
    Simulator::Schedule(Seconds(warmup), &WarmupSnapshot);
    for (const auto& c : rateSchedule)
    {
        Simulator::Schedule(Seconds(c.t), &SetBottleneckRate, g_bnDev, revDev, c.rate);
    }
    // Phase boundaries: 0, the warm-up and every change time (the end is read after the run).
    std::vector<double> phaseStarts = {0.0};
    if (warmup > 0 && warmup < duration)
    {
        phaseStarts.push_back(warmup);
    }
    for (const auto& c : rateSchedule)
    {
        if (c.t > 0 && c.t < duration)
        {
            phaseStarts.push_back(c.t);
        }
    }
    std::sort(phaseStarts.begin(), phaseStarts.end());
    phaseStarts.erase(std::unique(phaseStarts.begin(), phaseStarts.end()), phaseStarts.end());
    if (!rateSchedule.empty())
    {
        for (double t : phaseStarts)
        {
            Simulator::Schedule(Seconds(t), &PhaseSnapshotNow);
        }
    }
    if (queue == "red")
    {
        Simulator::Schedule(Seconds(warmup) + MilliSeconds(100), &SampleRedMaxP);
    }

    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    uint64_t events = Simulator::GetEventCount();

    g_twPkts.Update(duration, g_twPkts.lastV);
    g_twBytes.Update(duration, g_twBytes.lastV);
    QueueDisc::Stats st = g_qdisc->GetStats();
    if (!g_haveWarmStats)
    {
        g_statsAtWarmup = QueueDisc::Stats();
    }

    // Peak RSS of this process image: VmHWM is per address space, whereas getrusage's
    // ru_maxrss survives exec and would report the (larger) parent that forked us.
    long peakRssKb = 0;
    {
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line))
        {
            if (line.rfind("VmHWM:", 0) == 0)
            {
                peakRssKb = std::stol(line.substr(6));
            }
        }
    }

    // ------------------------------------------------------------ output
    double measure = duration - warmup;
    double bnBps = DataRate(bottleneckRate).GetBitRate();
    // The bottleneck rate in force at time t (the schedule's last change at or before t).
    auto rateAt = [&](double t) {
        double r = bnBps;
        for (const auto& c : rateSchedule)
        {
            if (c.t <= t)
            {
                r = c.rate.GetBitRate();
            }
        }
        return r;
    };
    // Mean capacity over the measured window (utilization and goodput fraction are relative to it);
    // without a schedule it is bottleneckRate.
    double capBps = bnBps;
    if (!rateSchedule.empty() && duration > warmup)
    {
        std::vector<double> cuts = {warmup, duration};
        for (const auto& c : rateSchedule)
        {
            if (c.t > warmup && c.t < duration)
            {
                cuts.push_back(c.t);
            }
        }
        std::sort(cuts.begin(), cuts.end());
        double bits = 0;
        for (size_t i = 0; i + 1 < cuts.size(); ++i)
        {
            bits += rateAt(cuts[i]) * (cuts[i + 1] - cuts[i]);
        }
        capBps = bits / (duration - warmup);
    }
    std::ostringstream o;
    o << std::setprecision(10);
    o << "{\n";
    o << "  \"ns3_version\": \"3.44\",\n";
    o << "  \"argv\": \"";
    for (int i = 0; i < argc; ++i)
    {
        o << (i ? " " : "") << JsonEscape(argv[i]);
    }
    o << "\",\n";
    o << "  \"config\": {\"nFlows\": " << nFlows << ", \"nUdp\": " << nUdp
      << ", \"bottleneckRate_bps\": " << bnBps << ", \"bottleneckDelay_ms\": " << bottleneckDelayMs
      << ", \"accessRate_bps\": " << DataRate(accessRate).GetBitRate() << ", \"queue\": \"" << queue
      << "\", \"queueLimit_pkts\": " << queueLimit << ", \"devQueue_pkts\": " << devQueue
      << ", \"reverseQueueLimit_pkts\": " << reverseQueueLimit
      << ", \"accessQueueLimit_pkts\": " << accessQueueLimit;
    if (queue == "red")
    {
        o << ", \"red\": {\"ARED\": " << (redAred ? "true" : "false")
          << ", \"AdaptMaxP\": " << (redAdaptMaxP ? "true" : "false")
          << ", \"FengAdaptive\": " << (redFengAdaptive ? "true" : "false")
          << ", \"TargetDelay_ms\": " << redTargetDelayMs << ", \"Interval_ms\": " << redIntervalMs
          << ", \"Alpha\": " << redAlpha << ", \"Beta\": " << redBeta << ", \"Top\": " << redTop
          << ", \"Bottom\": " << redBottom << ", \"Rtt_ms\": " << redRttMs
          << ", \"MinTh\": " << redMinTh << ", \"MaxTh\": " << redMaxTh
          << ", \"max_p\": " << redMaxP << ", \"LInterm\": " << 1.0 / redMaxP
          << ", \"QW\": " << redQW << ", \"Gentle\": " << (redGentle ? "true" : "false")
          << ", \"Wait\": " << (redWait ? "true" : "false")
          << ", \"UseHardDrop\": " << (redHardDrop ? "true" : "false")
          << ", \"MeanPktSize\": " << redMeanPktSize
          << ", \"Ns1Compat\": " << (redNs1Compat ? "true" : "false") << "}";
    }
    o << ", \"tcp\": {\"SocketType\": \"" << tcpType << "\", \"RecoveryType\": \"" << recoveryType
      << "\", \"SegmentSize\": " << mss << ", \"DelAckCount\": " << delAckCount
      << ", \"DelAckTimeout_ms\": " << delAckTimeoutMs << ", \"InitialCwnd\": " << initCwnd
      << ", \"InitialSlowStartThreshold\": " << initSsthresh << ", \"MinRto_ms\": " << minRtoMs
      << ", \"ConnTimeout_ms\": " << connTimeoutMs << ", \"RttInitialEstimation_ms\": " << rttInitialMs
      << ", \"ClockGranularity_ms\": " << clockGranularityMs
      << ", \"Sack\": " << (sack ? "true" : "false")
      << ", \"Timestamp\": " << (timestamps ? "true" : "false")
      << ", \"WindowScaling\": " << (windowScaling ? "true" : "false")
      << ", \"LimitedTransmit\": " << (limitedTransmit ? "true" : "false")
      << ", \"ReTxThreshold\": " << dupAckThresh << ", \"SndBufSize\": " << sndBuf
      << ", \"RcvBufSize\": " << rcvBuf << ", \"SendSize\": " << sendSize << ", \"UseEcn\": \"Off\"}";
    if (nUdp)
    {
        o << ", \"udp\": {\"rate_bps\": " << DataRate(udpRate).GetBitRate()
          << ", \"payload_bytes\": " << udpPktSize << ", \"start_s\": " << udpStart
          << ", \"stop_s\": " << udpStop << ", \"accessDelay_ms\": " << udpAccessDelayMs << "}";
    }
    o << ", \"rate_changes\": [";
    for (size_t i = 0; i < rateSchedule.size(); ++i)
    {
        o << (i ? ", " : "") << "{\"t_s\": " << rateSchedule[i].t
          << ", \"rate_bps\": " << rateSchedule[i].rate.GetBitRate() << "}";
    }
    o << "], \"mean_bottleneck_rate_after_warmup_bps\": " << capBps;
    o << ", \"duration_s\": " << duration << ", \"warmup_s\": " << warmup << ", \"seed\": " << seed
      << ", \"run\": " << run << ", \"startMode\": \"" << startMode << "\"},\n";

    o << "  \"wire\": {\"ipv4_header\": " << ipHdr << ", \"tcp_header_base\": " << tcpBase
      << ", \"tcp_options_data_segment\": " << tsOpt << ", \"ppp_header\": " << pppHdr
      << ", \"tcp_data_packet_ip_bytes\": " << dataIpBytes
      << ", \"tcp_data_frame_bytes\": " << dataIpBytes + pppHdr
      << ", \"tcp_per_packet_overhead_ip\": " << ipHdr + tcpHdrData
      << ", \"tcp_per_packet_overhead_frame\": " << ipHdr + tcpHdrData + pppHdr
      << ", \"pure_ack_ip_bytes\": " << ipHdr + tcpHdrData
      << ", \"pure_ack_frame_bytes\": " << ipHdr + tcpHdrData + pppHdr
      << ", \"sack_option_bytes\": \"2+8*nblocks (+2 pad if no timestamps)\""
      << ", \"udp_packet_ip_bytes\": " << udpPktSize + 28
      << ", \"udp_frame_bytes\": " << udpPktSize + 30
      << ", \"link_tx_time_uses\": \"frame bytes (IP + 2 B PPP), no preamble/IFG\""
      << ", \"qdisc_sizes_in\": \"IP packet bytes (no PPP)\""
      << ", \"observed_bottleneck_frame_sizes\": ";
    PrintHist(o, g_sizeHist);
    o << ", \"observed_reverse_frame_sizes\": ";
    PrintHist(o, g_revSizeHist);
    o << "},\n";

    o << "  \"flows\": [\n";
    double aggTcp = 0, aggUdp = 0;
    for (uint32_t i = 0; i < nSrc; ++i)
    {
        FlowStats& f = g_flows[i];
        uint64_t tot = f.sink->GetTotalRx();
        uint64_t after = tot - f.rxAtWarmup;
        double gp = measure > 0 ? after * 8.0 / measure : 0;
        (f.isTcp ? aggTcp : aggUdp) += gp;
        double baseRttMs = 2 * (f.srcDelayMs + bottleneckDelayMs + f.dstDelayMs);
        o << "    {\"id\": " << i << ", \"type\": \"" << (f.isTcp ? "tcp" : "udp")
          << "\", \"start_s\": " << f.startS << ", \"stop_s\": " << f.stopS
          << ", \"src_access_delay_ms\": " << f.srcDelayMs
          << ", \"dst_access_delay_ms\": " << f.dstDelayMs
          << ", \"base_rtt_prop_ms\": " << baseRttMs << ", \"rx_bytes_total\": " << tot
          << ", \"rx_bytes_after_warmup\": " << after << ", \"goodput_bps\": " << gp;
        if (f.isTcp)
        {
            o << ", \"socket_type\": \"" << flowTcpTypes[i] << "\"";
            o << ", \"data_pkts_sent\": " << f.dataPktsSent
              << ", \"data_pkts_sent_after_warmup\": " << f.dataPktsSentAfterWarmup
              << ", \"data_bytes_sent\": " << f.dataBytesSent << ", \"retx_pkts\": " << f.retxPkts
              << ", \"retx_pkts_after_warmup\": " << f.retxPktsAfterWarmup
              << ", \"ns3_retransmission_trace\": " << f.retxTrace
              << ", \"fast_recovery_episodes\": " << f.fastRecoveries
              << ", \"fast_recovery_episodes_after_warmup\": " << f.fastRecoveriesAfterWarmup
              << ", \"rto_loss_episodes\": " << f.rtoLoss
              << ", \"rto_loss_episodes_after_warmup\": " << f.rtoLossAfterWarmup
              << ", \"rto_expiries\": " << f.rtoExpiries
              << ", \"rto_expiries_after_warmup\": " << f.rtoExpiriesAfterWarmup
              << ", \"final_cwnd_bytes\": " << f.lastCwnd
              << ", \"final_ssthresh_bytes\": " << f.lastSsthresh;
        }
        o << "}" << (i + 1 < nSrc ? "," : "") << "\n";
    }
    o << "  ],\n";
    o << "  \"aggregate\": {\"tcp_goodput_bps\": " << aggTcp << ", \"udp_goodput_bps\": " << aggUdp
      << ", \"total_goodput_bps\": " << aggTcp + aggUdp
      << ", \"tcp_goodput_fraction_of_bottleneck\": " << aggTcp / capBps;
    {
        // Jain fairness over TCP goodputs
        double s = 0, s2 = 0;
        uint32_t n = 0;
        for (auto& f : g_flows)
        {
            if (!f.isTcp)
            {
                continue;
            }
            double g = (f.sink->GetTotalRx() - f.rxAtWarmup) * 8.0 / measure;
            s += g;
            s2 += g * g;
            n++;
        }
        o << ", \"jain_fairness_tcp\": " << (s2 > 0 ? s * s / (n * s2) : 0.0);
    }
    o << "},\n";

    // With --rateChanges: TCP goodput and bottleneck utilization per phase (between consecutive
    // boundaries among 0, the warm-up, the change times and the end).
    if (!rateSchedule.empty())
    {
        g_phaseSnaps.push_back({duration, TcpRxBytesNow(), g_bnTxBytes});
        o << "  \"rate_phases\": [";
        for (size_t i = 0; i + 1 < g_phaseSnaps.size(); ++i)
        {
            const auto& a = g_phaseSnaps[i];
            const auto& b = g_phaseSnaps[i + 1];
            double len = b.t - a.t;
            double rate = rateAt(a.t);
            o << (i ? ",\n    " : "\n    ") << "{\"start_s\": " << a.t << ", \"end_s\": " << b.t
              << ", \"rate_bps\": " << rate << ", \"after_warmup\": "
              << (a.t >= warmup ? "true" : "false")
              << ", \"tcp_goodput_bps\": " << (len > 0 ? (b.tcpRxBytes - a.tcpRxBytes) * 8.0 / len : 0)
              << ", \"utilization\": "
              << (len > 0 ? (b.frameBytes - a.frameBytes) * 8.0 / (rate * len) : 0) << "}";
        }
        o << "\n  ],\n";
    }

    auto dropsAll = st.nDroppedPacketsBeforeEnqueue;
    auto dropsAfterAll = st.nDroppedPacketsAfterDequeue; // COBALT's drops are made at dequeue
    o << "  \"bottleneck\": {\n";
    o << "    \"qdisc\": \"" << g_qdisc->GetInstanceTypeId().GetName()
      << "\", \"root_qdiscs_in_topology\": " << nRootQdiscs << ",\n";
    if (queue == "red")
    {
        // The settings RedQueueDisc runs with (ARED's automatic ones resolved) and its max_p.
        DoubleValue minTh;
        DoubleValue maxTh;
        DoubleValue qw;
        g_qdisc->GetAttribute("MinTh", minTh);
        g_qdisc->GetAttribute("MaxTh", maxTh);
        g_qdisc->GetAttribute("QW", qw);
        double mean = 0;
        for (double v : g_redMaxPSamples)
        {
            mean += v / g_redMaxPSamples.size();
        }
        o << std::setprecision(10) << "    \"red_state\": {\"min_th\": " << minTh.Get()
          << ", \"max_th\": " << maxTh.Get() << ", \"qw\": " << qw.Get()
          << ", \"cur_max_p_at_end\": " << RedCurrentMaxP()
          << ", \"mean_cur_max_p_after_warmup\": " << mean << "},\n";
    }
    o << "    \"total\": {\"arrived_pkts\": " << st.nTotalReceivedPackets
      << ", \"enqueued_pkts\": " << st.nTotalEnqueuedPackets
      << ", \"dequeued_pkts\": " << st.nTotalDequeuedPackets
      << ", \"dropped_pkts\": " << st.nTotalDroppedPackets
      << ", \"dropped_before_enqueue_pkts\": " << st.nTotalDroppedPacketsBeforeEnqueue
      << ", \"dropped_after_dequeue_pkts\": " << st.nTotalDroppedPacketsAfterDequeue
      << ", \"drop_reasons\": ";
    PrintDropMap(o, dropsAll);
    if (queue == "red")
    {
        o << ", \"red_early_drops\": " << MapGet(dropsAll, RedQueueDisc::UNFORCED_DROP)
          << ", \"red_forced_drops\": " << MapGet(dropsAll, RedQueueDisc::FORCED_DROP)
          << ", \"overflow_drops\": " << MapGet(dropsAll, QueueDisc::INTERNAL_QUEUE_DROP);
    }
    else if (queue == "pie")
    {
        o << ", \"pie_early_drops\": " << MapGet(dropsAll, PieQueueDisc::UNFORCED_DROP)
          << ", \"overflow_drops\": " << MapGet(dropsAll, PieQueueDisc::FORCED_DROP);
    }
    else if (queue == "fq_pie")
    {
        o << ", \"pie_early_drops\": " << MapGet(dropsAll, kChildPieUnforced.c_str())
          << ", \"overflow_drops\": " << MapGet(dropsAll, FqPieQueueDisc::OVERLIMIT_DROP);
    }
    else if (queue == "cobalt")
    {
        o << ", \"cobalt_early_drops\": " << MapGet(dropsAfterAll, CobaltQueueDisc::TARGET_EXCEEDED_DROP)
          << ", \"overflow_drops\": " << MapGet(dropsAll, CobaltQueueDisc::OVERLIMIT_DROP);
    }
    else if (queue == "fq_cobalt")
    {
        o << ", \"cobalt_early_drops\": " << MapGet(dropsAfterAll, kChildCobaltTarget.c_str())
          << ", \"overflow_drops\": "
          << MapGet(dropsAfterAll, FqCobaltQueueDisc::OVERLIMIT_DROP) + MapGet(dropsAll, kChildCobaltOverlimit.c_str());
    }
    else
    {
        o << ", \"overflow_drops\": " << MapGet(dropsAll, FifoQueueDisc::LIMIT_EXCEEDED_DROP);
    }
    o << "},\n";
    {
        const auto& w = g_statsAtWarmup;
        auto dm = st.nDroppedPacketsBeforeEnqueue;
        for (auto& [k, v] : dm)
        {
            v -= MapGet(w.nDroppedPacketsBeforeEnqueue, k.c_str());
        }
        auto dma = st.nDroppedPacketsAfterDequeue;
        for (auto& [k, v] : dma)
        {
            v -= MapGet(w.nDroppedPacketsAfterDequeue, k.c_str());
        }
        o << "    \"after_warmup\": {\"arrived_pkts\": "
          << st.nTotalReceivedPackets - w.nTotalReceivedPackets
          << ", \"enqueued_pkts\": " << st.nTotalEnqueuedPackets - w.nTotalEnqueuedPackets
          << ", \"dequeued_pkts\": " << st.nTotalDequeuedPackets - w.nTotalDequeuedPackets
          << ", \"dropped_pkts\": " << st.nTotalDroppedPackets - w.nTotalDroppedPackets
          << ", \"drop_reasons\": ";
        PrintDropMap(o, dm);
        uint32_t arr = st.nTotalReceivedPackets - w.nTotalReceivedPackets;
        o << ", \"drop_rate\": "
          << (arr ? double(st.nTotalDroppedPackets - w.nTotalDroppedPackets) / arr : 0.0);
        if (queue == "red")
        {
            o << ", \"red_early_drops\": " << MapGet(dm, RedQueueDisc::UNFORCED_DROP)
              << ", \"red_forced_drops\": " << MapGet(dm, RedQueueDisc::FORCED_DROP)
              << ", \"overflow_drops\": " << MapGet(dm, QueueDisc::INTERNAL_QUEUE_DROP);
        }
        else if (queue == "pie")
        {
            o << ", \"pie_early_drops\": " << MapGet(dm, PieQueueDisc::UNFORCED_DROP)
              << ", \"overflow_drops\": " << MapGet(dm, PieQueueDisc::FORCED_DROP);
        }
        else if (queue == "fq_pie")
        {
            o << ", \"pie_early_drops\": " << MapGet(dm, kChildPieUnforced.c_str())
              << ", \"overflow_drops\": " << MapGet(dm, FqPieQueueDisc::OVERLIMIT_DROP);
        }
        else if (queue == "cobalt")
        {
            o << ", \"cobalt_early_drops\": " << MapGet(dma, CobaltQueueDisc::TARGET_EXCEEDED_DROP)
              << ", \"overflow_drops\": " << MapGet(dm, CobaltQueueDisc::OVERLIMIT_DROP);
        }
        else if (queue == "fq_cobalt")
        {
            o << ", \"cobalt_early_drops\": " << MapGet(dma, kChildCobaltTarget.c_str())
              << ", \"overflow_drops\": "
              << MapGet(dma, FqCobaltQueueDisc::OVERLIMIT_DROP) + MapGet(dm, kChildCobaltOverlimit.c_str());
        }
        else
        {
            o << ", \"overflow_drops\": " << MapGet(dm, FifoQueueDisc::LIMIT_EXCEEDED_DROP);
        }
        o << "},\n";
    }
    if (queue == "cobalt" || queue == "fq_cobalt")
    {
        const auto& c = g_cobaltPdrop;
        o << "    \"cobalt_pdrop_after_warmup\": {\"samples\": " << c.n << ", \"samples_active\": " << c.nActive
          << ", \"max_seen\": " << c.maxSeen << ", \"mean_max\": " << (c.n ? c.sumMax / c.n : 0.0)
          << ", \"mean_active_queues\": " << (c.n ? double(c.sumActiveQueues) / c.n : 0.0) << "},\n";
    }
    o << "    \"queue_pkts\": {\"qdisc_mean_time_weighted_after_warmup\": "
      << (measure > 0 ? g_twPkts.areaWarm / measure : 0)
      << ", \"qdisc_mean_time_weighted_total\": " << g_twPkts.area / duration
      << ", \"qdisc_mean_sampled_after_warmup\": "
      << (g_samp.nWarm ? g_samp.sumQdWarm / g_samp.nWarm : 0)
      << ", \"qdisc_mean_sampled_total\": " << (g_samp.n ? g_samp.sumQd / g_samp.n : 0)
      << ", \"qdisc_max_sampled\": " << g_samp.maxQd
      << ", \"device_queue_mean_sampled_after_warmup\": "
      << (g_samp.nWarm ? g_samp.sumDevWarm / g_samp.nWarm : 0)
      << ", \"qdisc_plus_device_mean_sampled_after_warmup\": "
      << (g_samp.nWarm ? (g_samp.sumQdWarm + g_samp.sumDevWarm) / g_samp.nWarm : 0)
      << ", \"samples_after_warmup\": " << g_samp.nWarm << ", \"sample_interval_ms\": " << sampleMs
      << "},\n";
    o << "    \"queue_bytes\": {\"qdisc_mean_time_weighted_after_warmup\": "
      << (measure > 0 ? g_twBytes.areaWarm / measure : 0)
      << ", \"qdisc_mean_sampled_after_warmup\": "
      << (g_samp.nWarm ? g_samp.sumQdBytesWarm / g_samp.nWarm : 0) << "},\n";
    o << "    \"link\": {\"frames_tx_total\": " << g_bnTxPkts
      << ", \"frames_tx_after_warmup\": " << g_bnTxPktsWarm
      << ", \"frame_bytes_tx_after_warmup\": " << g_bnTxBytesWarm
      << ", \"utilization_after_warmup\": "
      << (measure > 0 ? g_bnTxBytesWarm * 8.0 / (capBps * measure) : 0)
      << ", \"device_queue_drops\": " << g_devQueue->GetTotalDroppedPackets()
      << ", \"reverse_device_queue_drops\": " << revDev->GetQueue()->GetTotalDroppedPackets()
      << "}\n";
    o << "  },\n";
    o << "  \"perf\": {\"wall_clock_run_s\": " << wall << ", \"events\": " << events
      << ", \"events_per_s\": " << (wall > 0 ? events / wall : 0)
      << ", \"peak_rss_kb\": " << peakRssKb << "}\n";
    o << "}\n";
    std::cout << o.str();

    Simulator::Destroy();
    return 0;
}
