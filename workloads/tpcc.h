// tpcc.h — TPC-C (Themis, Table II): the New-Order transaction on tables
// kept in the pool.
//
// Tables are arrays of fixed rows (column subsets of the TPC-C schema):
// WAREHOUSE, DISTRICT (10 per warehouse), CUSTOMER, ITEM, STOCK (one per
// item and warehouse), and per district a ring of the last `ring` ORDERs,
// NEW-ORDERs and their ORDER-LINEs (15 slots each).  One warehouse; scale
// is the number of items, with 3 % as many customers per district
// (100,000 items and 3,000 customers, the standard's, by default) and a
// ring of scale/100 orders (4..1024).
//
// New-Order as the standard defines it (clause 2.4): a random district,
// customer (NURand), 5-15 order lines of NURand items and quantities
// 1..10; 1 % of the transactions name an unused item last and roll back.
// The transaction reads the warehouse and district taxes and the next
// order id, the customer's discount, last name and credit, checks the
// items (an unused one rolls the wrap back here, before any store), then
// raises d_next_o_id (1 store), writes the ORDER row (5 words) and the
// NEW-ORDER row (1), and per line reads the item and the stock row
// (quantity, the district's dist_info), stores s_quantity, s_ytd and
// s_order_cnt (3) and writes the ORDER-LINE row (8 words): about 7 + 11 per
// line, 62..172 stores.  Threads lock the district, then the stripes of
// the lines' stock rows in ascending order.
//
// verify() (the standard's consistency conditions 1-3, adapted to the
// ring): each district's last orders have ids up to d_next_o_id - 1, a
// NEW-ORDER row each, and exactly o_ol_cnt lines whose amounts are
// quantity x price; stock quantities stay in 10..100; s_ytd and
// s_order_cnt grew by the quantities and lines committed.
#ifndef SOFTWRAP_WORKLOADS_TPCC_H_
#define SOFTWRAP_WORKLOADS_TPCC_H_

#include <algorithm>
#include <mutex>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

struct TpccSizes {
  uint64_t items, customers, ring;
};
inline TpccSizes tpcc_sizes(uint64_t scale) {
  return {scale, std::clamp<uint64_t>(scale * 3 / 100, 4, 3000), std::clamp<uint64_t>(scale / 100, 4, 1024)};
}
inline constexpr uint64_t kTpccDistricts = 10, kTpccMaxLines = 15;

inline uint64_t tpcc_heap_bytes(const Params& p) {
  const TpccSizes z = tpcc_sizes(p.scale);
  return z.items * (72 + 304) + kTpccDistricts * (z.customers * 48 + z.ring * (40 + 8 + kTpccMaxLines * 64)) + 65536;
}

inline const Info kTpccInfo{"tpcc", "TPCC", "Themis, Table II",
                            "New-Order: one order of 5-15 lines into in-pool tables (1 % roll back)", nullptr, 1,
                            "items (customers per district: 3 %)", 100'000, 32, tpcc_heap_bytes};

template <class A>
class Tpcc {
 public:
  static const Info& info() { return kTpccInfo; }
  Tpcc(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), stock_locks_(1024),
        district_mu_(kTpccDistricts), qty_(p_.threads), lines_(p_.threads), scratch_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    a.store(&t_.district[0].d_next_o_id, a.load(&t_.district[0].d_next_o_id) + 1);
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x545043432D4E4F31ull;  // "TPCC-NO1"
  struct Warehouse {
    uint64_t w_id;
    uint32_t w_tax, pad;  // tax in 1/10000
    uint64_t w_ytd;
    char w_name[16];
  };
  struct District {
    uint64_t d_id;
    uint32_t d_tax, pad;
    uint64_t d_ytd, d_next_o_id;
  };
  struct Customer {
    uint64_t c_id;
    uint32_t c_d_id, c_discount;  // discount in 1/10000
    char c_credit[8];             // "GC" or "BC"
    char c_last[16];
    int64_t c_balance;
  };
  struct Item {
    uint32_t i_id, i_im_id, i_price, pad;  // price in cents
    char i_name[24];
    char i_data[32];
  };
  struct Stock {
    uint32_t s_quantity, s_ytd, s_order_cnt, s_remote_cnt;
    uint64_t s_i_id;
    char s_dist[kTpccDistricts][24];
    char s_data[40];
  };
  struct Order {
    uint64_t o_id, o_c_id, o_entry_d;
    uint32_t o_carrier_id, o_ol_cnt;
    uint64_t o_all_local;
  };
  struct OrderLine {
    uint64_t ol_o_id;
    uint32_t ol_number, ol_i_id;
    uint32_t ol_supply_w_id, ol_quantity;
    uint64_t ol_delivery_d, ol_amount;
    char ol_dist_info[24];
  };
  static_assert(sizeof(Stock) == 304 && sizeof(Item) == 72 && sizeof(OrderLine) == 64 && sizeof(Order) == 40);
  struct Root {
    uint64_t magic, items, customers, ring;
    uint64_t warehouse, district, customer, item, stock, order, new_order, order_line;
  };
  struct Tables {
    Warehouse* warehouse = nullptr;
    District* district = nullptr;
    Customer* customer = nullptr;
    Item* item = nullptr;
    Stock* stock = nullptr;
    Order* order = nullptr;
    uint64_t* new_order = nullptr;
    OrderLine* order_line = nullptr;
  };
  struct Line {
    uint64_t i_id;
    uint32_t qty;
  };

  // d in 0..9; o_id's slot in the district's ring.
  uint64_t slot(uint64_t d, uint64_t o_id) const { return d * z_.ring + o_id % z_.ring; }
  static uint64_t nurand(Rng& r, uint64_t a, uint64_t x, uint64_t y) {
    return (((r.between(0, a) | r.between(x, y)) + 123) % (y - x + 1)) + x;
  }
  static void letters(Rng& r, char* out, size_t n) {
    for (size_t i = 0; i + 1 < n; ++i) out[i] = static_cast<char>('a' + r.below(26));
    out[n - 1] = 0;
  }
  // Zero-fills n bytes at p in wraps of 4 KiB (rings a crash image must
  // hold as the mirror does).
  void zero(A& a, void* p, uint64_t n) {
    static const char kZero[4096] = {};
    for (uint64_t at = 0; at < n; at += sizeof kZero) {
      Wrap<A> w(a);
      a.write(static_cast<char*>(p) + at, kZero, std::min<uint64_t>(sizeof kZero, n - at));
      w.commit();
    }
  }
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable stock_locks_;
  std::vector<std::mutex> district_mu_;
  ThreadCounts qty_, lines_;  // quantities and lines committed since setup()/attach()
  std::vector<std::vector<size_t>> scratch_;
  TpccSizes z_{};
  Root* root_ = nullptr;
  Tables t_;
  uint64_t base_ytd_ = 0, base_cnt_ = 0;
};

template <class A>
void Tpcc<A>::setup() {
  A& a = acc_[0];
  z_ = tpcc_sizes(p_.scale);
  const uint64_t nd = kTpccDistricts, nc = nd * z_.customers, nr = nd * z_.ring;
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    t_.warehouse = static_cast<Warehouse*>(a.alloc(sizeof(Warehouse)));
    t_.district = static_cast<District*>(a.alloc(nd * sizeof(District)));
    t_.customer = static_cast<Customer*>(a.alloc(nc * sizeof(Customer)));
    t_.item = static_cast<Item*>(a.alloc(z_.items * sizeof(Item)));
    t_.stock = static_cast<Stock*>(a.alloc(z_.items * sizeof(Stock)));
    t_.order = static_cast<Order*>(a.alloc(nr * sizeof(Order)));
    t_.new_order = static_cast<uint64_t*>(a.alloc(nr * 8));
    t_.order_line = static_cast<OrderLine*>(a.alloc(nr * kTpccMaxLines * sizeof(OrderLine)));
    const Root r{0,
                 z_.items,
                 z_.customers,
                 z_.ring,
                 a.off(t_.warehouse),
                 a.off(t_.district),
                 a.off(t_.customer),
                 a.off(t_.item),
                 a.off(t_.stock),
                 a.off(t_.order),
                 a.off(t_.new_order),
                 a.off(t_.order_line)};
    a.write(root_, &r, sizeof r);
    Rng g(p_.seed);
    Warehouse wh{1, static_cast<uint32_t>(g.below(2001)), 0, 30'000'000, {}};
    letters(g, wh.w_name, sizeof wh.w_name);
    a.write(t_.warehouse, &wh, sizeof wh);
    for (uint64_t d = 0; d < nd; ++d) {
      const District di{d + 1, static_cast<uint32_t>(g.below(2001)), 0, 3'000'000, 1};
      a.write(&t_.district[d], &di, sizeof di);
    }
    w.commit();
  }
  Rng g(p_.seed + 1);
  in_wraps(a, nc, 64, [&](uint64_t i) {
    Customer c{};
    c.c_id = i % z_.customers + 1;
    c.c_d_id = static_cast<uint32_t>(i / z_.customers + 1);
    c.c_discount = static_cast<uint32_t>(g.below(5001));
    std::memcpy(c.c_credit, g.percent(10) ? "BC" : "GC", 3);
    letters(g, c.c_last, sizeof c.c_last);
    c.c_balance = -1000;
    a.write(&t_.customer[i], &c, sizeof c);
  });
  in_wraps(a, z_.items, 32, [&](uint64_t i) {
    Item it{};
    it.i_id = static_cast<uint32_t>(i + 1);
    it.i_im_id = static_cast<uint32_t>(g.between(1, 10000));
    it.i_price = static_cast<uint32_t>(g.between(100, 10000));
    letters(g, it.i_name, sizeof it.i_name);
    letters(g, it.i_data, sizeof it.i_data);
    a.write(&t_.item[i], &it, sizeof it);
    Stock s{};
    s.s_quantity = static_cast<uint32_t>(g.between(10, 100));
    s.s_i_id = i + 1;
    for (auto& dist : s.s_dist) letters(g, dist, sizeof dist);
    letters(g, s.s_data, sizeof s.s_data);
    a.write(&t_.stock[i], &s, sizeof s);
  });
  zero(a, t_.order, nr * sizeof(Order));
  zero(a, t_.new_order, nr * 8);
  zero(a, t_.order_line, nr * kTpccMaxLines * sizeof(OrderLine));
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);
  w.commit();
  adopt();
}

template <class A>
void Tpcc<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "TPCC");
  z_ = {a.load(&root_->items), a.load(&root_->customers), a.load(&root_->ring)};
  if (z_.items == 0 || z_.customers == 0 || z_.ring == 0) throw WorkloadError("TPCC: the root names empty tables");
  t_.warehouse = a.template ptr<Warehouse>(a.load(&root_->warehouse));
  t_.district = a.template ptr<District>(a.load(&root_->district));
  t_.customer = a.template ptr<Customer>(a.load(&root_->customer));
  t_.item = a.template ptr<Item>(a.load(&root_->item));
  t_.stock = a.template ptr<Stock>(a.load(&root_->stock));
  t_.order = a.template ptr<Order>(a.load(&root_->order));
  t_.new_order = a.template ptr<uint64_t>(a.load(&root_->new_order));
  t_.order_line = a.template ptr<OrderLine>(a.load(&root_->order_line));
  adopt();
}

template <class A>
void Tpcc<A>::adopt() {
  A& a = acc_[0];
  base_ytd_ = base_cnt_ = 0;
  for (uint64_t i = 0; i < z_.items; ++i) {
    base_ytd_ += a.load(&t_.stock[i].s_ytd);
    base_cnt_ += a.load(&t_.stock[i].s_order_cnt);
  }
  qty_.clear();
  lines_.clear();
}

template <class A>
void Tpcc<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  Rng& r = rng_[tid];
  std::vector<Line> lines;
  std::vector<uint64_t> stock_ids;
  char c_last[16], c_credit[8], i_text[56], s_text[24 + 40];
  for (uint64_t t = 0; t < transactions; ++t) {
    const uint64_t d = r.below(kTpccDistricts);
    const uint64_t c = nurand(r, 1023, 1, z_.customers);
    const uint64_t ol_cnt = r.between(5, kTpccMaxLines);
    const bool rollback = r.percent(1);
    lines.resize(ol_cnt);
    stock_ids.resize(ol_cnt);
    for (uint64_t n = 0; n < ol_cnt; ++n) {
      lines[n] = {nurand(r, 8191, 1, z_.items), static_cast<uint32_t>(r.between(1, 10))};
      stock_ids[n] = lines[n].i_id;
    }
    if (rollback) lines.back().i_id = z_.items + 1;  // unused: the standard's 1 % rollback
    const uint64_t entry_d = r.next();
    std::lock_guard<std::mutex> dg(district_mu_[d]);
    LockTable::Guard sg(stock_locks_, stock_ids, scratch_[tid]);
    Wrap<A> w(a);
    // Taxes, discount, last name and credit go to the terminal's screen.
    [[maybe_unused]] const uint32_t w_tax = a.load(&t_.warehouse->w_tax);
    District* di = &t_.district[d];
    [[maybe_unused]] const uint32_t d_tax = a.load(&di->d_tax);
    const uint64_t o_id = a.load(&di->d_next_o_id);
    Customer* cu = &t_.customer[d * z_.customers + (c - 1)];
    [[maybe_unused]] const uint32_t discount = a.load(&cu->c_discount);
    a.read(c_last, cu->c_last, sizeof c_last);
    a.read(c_credit, cu->c_credit, sizeof c_credit);
    if (std::any_of(lines.begin(), lines.end(), [&](const Line& l) { return l.i_id > z_.items; })) {
      w.abort();  // "Item number is not valid": nothing was stored yet
      continue;
    }
    a.store(&di->d_next_o_id, o_id + 1);
    const Order o{o_id, c, entry_d, 0, static_cast<uint32_t>(ol_cnt), 1};
    const uint64_t s = slot(d, o_id);
    a.write(&t_.order[s], &o, sizeof o);
    a.store(&t_.new_order[s], o_id);
    uint64_t qty_sum = 0;
    for (uint64_t n = 0; n < ol_cnt; ++n) {
      const Line& l = lines[n];
      Item* it = &t_.item[l.i_id - 1];
      const uint64_t price = a.load(&it->i_price);
      a.read(i_text, it->i_name, sizeof i_text);  // i_name, i_data (brand check)
      Stock* st = &t_.stock[l.i_id - 1];
      const uint32_t q = a.load(&st->s_quantity);
      a.read(s_text, st->s_dist[d], 24);
      a.read(s_text + 24, st->s_data, 40);
      a.store(&st->s_quantity, q >= l.qty + 10 ? q - l.qty : q - l.qty + 91);
      a.store(&st->s_ytd, a.load(&st->s_ytd) + l.qty);
      a.store(&st->s_order_cnt, a.load(&st->s_order_cnt) + 1);
      OrderLine ol{o_id, static_cast<uint32_t>(n + 1), static_cast<uint32_t>(l.i_id), 1, l.qty, 0, l.qty * price, {}};
      std::memcpy(ol.ol_dist_info, s_text, sizeof ol.ol_dist_info);
      a.write(&t_.order_line[s * kTpccMaxLines + n], &ol, sizeof ol);
      qty_sum += l.qty;
    }
    w.commit();
    qty_.add(tid, static_cast<int64_t>(qty_sum));
    lines_.add(tid, static_cast<int64_t>(ol_cnt));
  }
}

template <class A>
std::string Tpcc<A>::verify() {
  A& a = acc_[0];
  for (uint64_t d = 0; d < kTpccDistricts; ++d) {
    const uint64_t next = a.load(&t_.district[d].d_next_o_id);
    const std::string dn = "TPCC: district " + std::to_string(d + 1) + ": ";
    for (uint64_t o_id = next > z_.ring ? next - z_.ring : 1; o_id < next; ++o_id) {
      const uint64_t s = slot(d, o_id);
      if (a.load(&t_.order[s].o_id) != o_id) return mismatch(dn + "ORDER id", a.load(&t_.order[s].o_id), o_id);
      if (a.load(&t_.new_order[s]) != o_id) return mismatch(dn + "NEW-ORDER id", a.load(&t_.new_order[s]), o_id);
      const uint64_t cnt = a.load(&t_.order[s].o_ol_cnt);
      if (cnt < 5 || cnt > kTpccMaxLines) return mismatch(dn + "o_ol_cnt", cnt, 5);
      for (uint64_t n = 0; n < cnt; ++n) {
        const OrderLine* ol = &t_.order_line[s * kTpccMaxLines + n];
        if (a.load(&ol->ol_o_id) != o_id || a.load(&ol->ol_number) != n + 1) {
          return dn + "order " + std::to_string(o_id) + " lacks line " + std::to_string(n + 1);
        }
        const uint64_t i_id = a.load(&ol->ol_i_id), qty = a.load(&ol->ol_quantity);
        if (i_id < 1 || i_id > z_.items || qty < 1 || qty > 10) return dn + "an order line names no item or quantity";
        const uint64_t amount = qty * a.load(&t_.item[i_id - 1].i_price);
        if (a.load(&ol->ol_amount) != amount) return mismatch(dn + "ol_amount", a.load(&ol->ol_amount), amount);
      }
    }
  }
  uint64_t ytd = 0, cnt = 0;
  for (uint64_t i = 0; i < z_.items; ++i) {
    const uint64_t q = a.load(&t_.stock[i].s_quantity);
    if (q < 10 || q > 100) return mismatch("TPCC: s_quantity of item " + std::to_string(i + 1), q, 10);
    ytd += a.load(&t_.stock[i].s_ytd);
    cnt += a.load(&t_.stock[i].s_order_cnt);
  }
  const uint64_t want_ytd = base_ytd_ + static_cast<uint64_t>(qty_.sum());
  const uint64_t want_cnt = base_cnt_ + static_cast<uint64_t>(lines_.sum());
  if (ytd != want_ytd) return mismatch("TPCC: the stock's s_ytd add up to", ytd, want_ytd);
  if (cnt != want_cnt) return mismatch("TPCC: the stock's s_order_cnt add up to", cnt, want_cnt);
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_TPCC_H_
